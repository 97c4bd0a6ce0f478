//go:build cgo

package simplegoplus

// OpenBLAS is loaded at run time with dlopen, not linked: a build never fails for lack of the
// library, and a machine without it (or a CPU it cannot drive) gets SimpleGo's own executors with a
// message saying why (see BLASStatus). Only the C library's dlopen is needed at build time.

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// CBLAS enums (cblas.h): row-major layout, transposes.
enum { fbRowMajor = 101, fbNoTrans = 111, fbTrans = 112 };

typedef void (*fb_sgemm_t)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
typedef void (*fb_dgemm_t)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
typedef void (*fb_set_threads_t)(int);
typedef char* (*fb_str_t)(void);

static void* fb_lib;
static fb_sgemm_t fb_sgemm;
static fb_dgemm_t fb_dgemm;

// fb_open loads the library and its symbols; it returns 0 on success, or a code saying what failed.
static int fb_open(const char* path, int threads) {
	fb_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!fb_lib) return 1;
	fb_sgemm = (fb_sgemm_t)dlsym(fb_lib, "cblas_sgemm");
	fb_dgemm = (fb_dgemm_t)dlsym(fb_lib, "cblas_dgemm");
	if (!fb_sgemm || !fb_dgemm) return 2;
	fb_set_threads_t set = (fb_set_threads_t)dlsym(fb_lib, "openblas_set_num_threads");
	if (set) set(threads);
	return 0;
}

static const char* fb_dlerror(void) { const char* e = dlerror(); return e ? e : ""; }

static const char* fb_call_str(const char* name) {
	if (!fb_lib) return "";
	fb_str_t f = (fb_str_t)dlsym(fb_lib, name);
	if (!f) return "";
	const char* s = f();
	return s ? s : "";
}

// fb_sgemm_batch computes, for each of batch entries, C_b = op(A_b) op(B_b), row-major, where
// op(A_b) is [m, k] and op(B_b) is [k, n]; ld* are the leading dimensions and stride* the distances
// in elements between consecutive batch entries.
static void fb_sgemm_batch(int batch, int transA, int transB, int m, int n, int k,
		const float* a, int lda, long strideA, const float* b, int ldb, long strideB, float* c, int ldc, long strideC) {
	for (int i = 0; i < batch; i++) {
		fb_sgemm(fbRowMajor, transA ? fbTrans : fbNoTrans, transB ? fbTrans : fbNoTrans, m, n, k,
			1.0f, a + i * strideA, lda, b + i * strideB, ldb, 0.0f, c + i * strideC, ldc);
	}
}

static void fb_dgemm_batch(int batch, int transA, int transB, int m, int n, int k,
		const double* a, int lda, long strideA, const double* b, int ldb, long strideB, double* c, int ldc, long strideC) {
	for (int i = 0; i < batch; i++) {
		fb_dgemm(fbRowMajor, transA ? fbTrans : fbNoTrans, transB ? fbTrans : fbNoTrans, m, n, k,
			1.0, a + i * strideA, lda, b + i * strideB, ldb, 0.0, c + i * strideC, ldc);
	}
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"
)

// blasLibraries are the names tried, in order, unless $FEDBAYES_BLAS_LIB names one. Debian's
// libopenblas0-pthread (a dependency of libopenblas-dev) provides libopenblas.so.0.
var blasLibraries = []string{"libopenblas.so.0", "libopenblas.so"}

// blasThreads is the number of threads OpenBLAS may use inside one call: 1, so that the second core
// comes from this package's own splits without oversubscribing the machine (docs/pure-go-backend.md,
// "Threads"); $FEDBAYES_BLAS_THREADS overrides it, for measuring the alternative.
func blasThreads() int {
	if n, err := strconv.Atoi(os.Getenv("FEDBAYES_BLAS_THREADS")); err == nil && n >= 1 {
		return n
	}
	return 1
}

// loadBLAS opens OpenBLAS once at init. It returns a description of what was loaded, or an error
// saying why not (the caller then keeps SimpleGo's executors).
func loadBLAS() (string, error) {
	switch strings.ToLower(os.Getenv("FEDBAYES_BLAS")) {
	case "off", "0", "false", "no", "none":
		return "", fmt.Errorf("disabled by FEDBAYES_BLAS=%s", os.Getenv("FEDBAYES_BLAS"))
	}
	names := blasLibraries
	if p := os.Getenv("FEDBAYES_BLAS_LIB"); p != "" {
		names = []string{p}
	}
	var reasons []string
	for _, name := range names {
		cName := C.CString(name)
		code := C.fb_open(cName, C.int(blasThreads()))
		C.free(unsafe.Pointer(cName))
		switch code {
		case 0:
			desc := name
			cfgName := C.CString("openblas_get_config")
			cfg := C.GoString(C.fb_call_str(cfgName))
			C.free(unsafe.Pointer(cfgName))
			if cfg != "" {
				desc += " (" + strings.TrimSpace(cfg) + ")"
			}
			return desc, nil
		case 1:
			reasons = append(reasons, fmt.Sprintf("%s: %s", name, C.GoString(C.fb_dlerror())))
		default:
			reasons = append(reasons, fmt.Sprintf("%s: no cblas_sgemm/cblas_dgemm symbols", name))
		}
	}
	return "", fmt.Errorf("OpenBLAS not found (%s); install it with: apt-get install libopenblas-dev",
		strings.Join(reasons, "; "))
}

// gemm32 runs g on float32 slices through cblas_sgemm.
func gemm32(g gemm, a, b, c []float32) {
	C.fb_sgemm_batch(C.int(g.Batch), cBool(g.TransA), cBool(g.TransB), C.int(g.M), C.int(g.N), C.int(g.K),
		(*C.float)(unsafe.Pointer(&a[g.OffA])), C.int(g.LdA), C.long(g.StrideA),
		(*C.float)(unsafe.Pointer(&b[g.OffB])), C.int(g.LdB), C.long(g.StrideB),
		(*C.float)(unsafe.Pointer(&c[g.OffC])), C.int(g.LdC), C.long(g.StrideC))
}

// gemm64 runs g on float64 slices through cblas_dgemm.
func gemm64(g gemm, a, b, c []float64) {
	C.fb_dgemm_batch(C.int(g.Batch), cBool(g.TransA), cBool(g.TransB), C.int(g.M), C.int(g.N), C.int(g.K),
		(*C.double)(unsafe.Pointer(&a[g.OffA])), C.int(g.LdA), C.long(g.StrideA),
		(*C.double)(unsafe.Pointer(&b[g.OffB])), C.int(g.LdB), C.long(g.StrideB),
		(*C.double)(unsafe.Pointer(&c[g.OffC])), C.int(g.LdC), C.long(g.StrideC))
}

func cBool(v bool) C.int {
	if v {
		return 1
	}
	return 0
}

// blasCoreName asks the loaded OpenBLAS which CPU kernels it chose (openblas_get_corename: for
// example "Haswell" or "SkylakeX", the choice of a DYNAMIC_ARCH build or OPENBLAS_CORETYPE); "" when
// no OpenBLAS is loaded or it lacks the function.
func blasCoreName() string {
	name := C.CString("openblas_get_corename")
	defer C.free(unsafe.Pointer(name))
	return strings.TrimSpace(C.GoString(C.fb_call_str(name)))
}

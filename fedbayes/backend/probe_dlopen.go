//go:build linux || darwin

package backend

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdio.h>

// The first fields of PJRT_Api and PJRT_Api_Version, as declared in XLA's pjrt_c_api.h (the copy in
// go-xla v0.1.4, pkg/pjrt/pjrt_c_api.h). Their layout cannot change without a new PJRT_API_MAJOR, so
// reading them needs nothing else from the header.
typedef struct {
	size_t struct_size;
	void* extension_start;
	int major_version;
	int minor_version;
} fedbayes_pjrt_api_version;

typedef struct {
	size_t struct_size;
	void* extension_start;
	fedbayes_pjrt_api_version pjrt_api_version;
} fedbayes_pjrt_api_head;

typedef const fedbayes_pjrt_api_head* (*fedbayes_get_pjrt_api)(void);

// fedbayes_probe opens path, looks up GetPjrtApi, calls it and reads the API version. It returns 0 on
// success; otherwise 1 (dlopen failed), 2 (no GetPjrtApi symbol), 3 (GetPjrtApi returned NULL) or
// 4 (the returned table is too small to hold a version), with the dl error copied into err.
static int fedbayes_probe(const char* path, int* major, int* minor, size_t* api_size, char* err, size_t errlen) {
	dlerror();
	void* h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (h == NULL) {
		const char* e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "unknown dlopen error");
		return 1;
	}
	dlerror();
	void* sym = dlsym(h, "GetPjrtApi");
	const char* e = dlerror();
	if (e != NULL || sym == NULL) {
		snprintf(err, errlen, "%s", e ? e : "GetPjrtApi is NULL");
		dlclose(h);
		return 2;
	}
	const fedbayes_pjrt_api_head* api = ((fedbayes_get_pjrt_api)sym)();
	if (api == NULL) {
		dlclose(h);
		return 3;
	}
	*api_size = api->struct_size;
	if (api->struct_size < sizeof(fedbayes_pjrt_api_head)) {
		dlclose(h);
		return 4;
	}
	*major = api->pjrt_api_version.major_version;
	*minor = api->pjrt_api_version.minor_version;
	// The handle is deliberately kept open: PJRT plugins register global state (flags, allocators) when
	// first called, and unloading them afterwards is not supported by XLA.
	return 0;
}
*/
import "C"

import (
	"fmt"
	"os"
	"unsafe"
)

// Probe checks that the file at path is a PJRT plugin: it opens it with dlopen, looks up the
// GetPjrtApi symbol every PJRT plugin exports, calls it and reads the PJRT C API version the plugin
// was built with. It does not initialise the plugin or create a client, so it works for a CUDA
// plugin on a machine without a GPU. Anything else (a text file, a shared library without
// GetPjrtApi, a library whose dependencies are missing) is an error that says which.
//
// Probe runs the file's initialisers in this process: only probe files you would load anyway.
func Probe(path string) (APIVersion, error) {
	st, err := os.Stat(path)
	if err != nil {
		return APIVersion{}, fmt.Errorf("%s: %w", path, err)
	}
	if st.IsDir() {
		return APIVersion{}, fmt.Errorf("%s is a folder, not a PJRT plugin file (.so)", path)
	}
	cPath := C.CString(path)
	defer C.free(unsafe.Pointer(cPath))
	var major, minor C.int
	var size C.size_t
	errBuf := (*C.char)(C.malloc(1024))
	defer C.free(unsafe.Pointer(errBuf))
	*errBuf = 0
	switch rc := C.fedbayes_probe(cPath, &major, &minor, &size, errBuf, 1024); rc {
	case 0:
		return APIVersion{Major: int(major), Minor: int(minor)}, nil
	case 1:
		return APIVersion{}, fmt.Errorf("%s is not a loadable shared library (dlopen: %s): a PJRT plugin is a .so file "+
			"such as pjrt_c_api_cpu_plugin.so or jax's xla_cuda_plugin.so; if it is one, a library it needs is missing (check with `ldd %s`)",
			path, C.GoString(errBuf), path)
	case 2:
		return APIVersion{}, fmt.Errorf("%s is a shared library but not a PJRT plugin: it does not export GetPjrtApi", path)
	case 3:
		return APIVersion{}, fmt.Errorf("%s: GetPjrtApi returned no API table: not a usable PJRT plugin", path)
	default:
		return APIVersion{}, fmt.Errorf("%s: GetPjrtApi returned a table of %d bytes, too small for a PJRT API: not a PJRT plugin", path, size)
	}
}

package data

import (
	"fmt"
	"math"
	"path/filepath"
)

// ReadSVHNMat reads one file of SVHN's cropped digits (Netzer et al. 2011, "format 2":
// train_32x32.mat, test_32x32.mat, extra_32x32.mat): X, uint8 [H, W, C, N] in MATLAB's column-major
// order, and y, [N, 1] labels 1..10 where 10 stands for the digit 0. The result has images
// [H, W, C] with pixels in [0, 1] and labels 0..9 (the digit itself).
func ReadSVHNMat(path, name string) (*Dataset, error) {
	vars, err := ReadMAT(path, "X", "y")
	if err != nil {
		return nil, err
	}
	x, y := vars["X"], vars["y"]
	if x == nil || y == nil {
		return nil, fileErrorf(path, "SVHN file must hold variables X and y (found X: %v, y: %v)", x != nil, y != nil)
	}
	if len(x.Dims) != 4 {
		return nil, fileErrorf(path, "SVHN X has dimensions %v, want [H, W, C, N]", x.Dims)
	}
	h, w, c, n := x.Dims[0], x.Dims[1], x.Dims[2], x.Dims[3]
	if y.Len() != n || len(y.Dims) != 2 || (y.Dims[0] != 1 && y.Dims[1] != 1) {
		return nil, fileErrorf(path, "SVHN y has dimensions %v, want [%d, 1] (one label per image of X %v)", y.Dims, n, x.Dims)
	}
	ds := &Dataset{Name: name, Shape: []int{h, w, c}, NumClasses: 10, ClassNames: digitNames,
		X: make([]float32, x.Len()), Labels: make([]int32, n)}
	for i := 0; i < n; i++ {
		v := y.At(i)
		if v != math.Trunc(v) || v < 1 || v > 10 {
			return nil, fileErrorf(path, "SVHN label y(%d) = %g, want an integer in 1..10", i+1, v)
		}
		ds.Labels[i] = int32(v) % 10
	}
	px := x.Bytes()
	if px == nil { // stored as another type: accept whole values in 0..255
		px = make([]byte, x.Len())
		for i := range px {
			v := x.At(i)
			if v != math.Trunc(v) || v < 0 || v > 255 {
				return nil, fileErrorf(path, "SVHN X element %d = %g, want an integer pixel in 0..255", i, v)
			}
			px[i] = byte(v)
		}
	}
	// Column-major X(r, col, ch, e) is at r + h*(col + w*(ch + c*e)); out is [e][r][col][ch].
	plane := h * w
	for e := 0; e < n; e++ {
		src := px[e*plane*c : (e+1)*plane*c]
		dst := ds.X[e*plane*c : (e+1)*plane*c]
		for ch := 0; ch < c; ch++ {
			for col := 0; col < w; col++ {
				for r := 0; r < h; r++ {
					dst[(r*w+col)*c+ch] = pixelScale[src[r+h*(col+w*ch)]]
				}
			}
		}
	}
	if err := ds.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ds, nil
}

// LoadSVHN loads SVHN's cropped digits (train_32x32.mat and test_32x32.mat) from dir/svhn or dir.
// The extra set is not loaded; read it with ReadSVHNMat if wanted.
func LoadSVHN(dir string) (train, test *Dataset, err error) {
	folders := dataFolders(dir, "svhn")
	trainPath, err := findFile(folders, "train_32x32.mat")
	if err != nil {
		return nil, nil, fmt.Errorf("svhn: %w", err)
	}
	testPath, err := findFile([]string{filepath.Dir(trainPath)}, "test_32x32.mat")
	if err != nil {
		return nil, nil, fmt.Errorf("svhn: %w", err)
	}
	if train, err = ReadSVHNMat(trainPath, "svhn/train"); err != nil {
		return nil, nil, err
	}
	if test, err = ReadSVHNMat(testPath, "svhn/test"); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

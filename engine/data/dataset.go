package data

import (
	"fmt"
	"os"
	"path/filepath"
)

// FashionMNISTDir is where Debian's dataset-fashion-mnist package installs
// Fashion-MNIST.
const FashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// Panic messages for programmer errors.
const (
	errIndex = "data: sample index out of range"
	errRange = "data: slice bounds out of range"
	errShard = "data: batch or worker out of range"
	errPlan  = "data: invalid sampler: "
)

// Dataset is an in-memory image classification data set of the MNIST
// shape: N grey-scale images of Rows × Cols bytes with one class label each.
type Dataset struct {
	// Name says where the samples came from (a file, "synthetic"), for
	// messages.
	Name string
	// N is the number of samples.
	N int
	// Rows and Cols are the image height and width in pixels.
	Rows, Cols int
	// Classes is the number of classes, one more than the largest label.
	Classes int
	// Pixels holds N·Rows·Cols intensities 0 to 255, one image after
	// another, each row-major.
	Pixels []uint8
	// Labels holds the N class labels, each in [0, Classes).
	Labels []uint8
}

// NewDataset checks that images (count × rows × cols) and labels (count)
// agree and returns the data set they form, named name.
func NewDataset(name string, images, labels *IDX) (*Dataset, error) {
	if images.Magic() != MagicImages {
		return nil, fmt.Errorf("dataset %s: images %w 0x%08x, want 0x%08x", name, ErrBadMagic, images.Magic(), uint32(MagicImages))
	}
	if labels.Magic() != MagicLabels {
		return nil, fmt.Errorf("dataset %s: labels %w 0x%08x, want 0x%08x", name, ErrBadMagic, labels.Magic(), uint32(MagicLabels))
	}
	n, rows, cols := images.Dims[0], images.Dims[1], images.Dims[2]
	switch {
	case n != labels.Dims[0]:
		return nil, fmt.Errorf("dataset %s: %d images but %d labels", name, n, labels.Dims[0])
	case n == 0:
		return nil, fmt.Errorf("dataset %s: no samples", name)
	case rows == 0 || cols == 0:
		return nil, fmt.Errorf("dataset %s: images are %dx%d pixels", name, rows, cols)
	case len(images.Data) != n*rows*cols || len(labels.Data) != n:
		return nil, fmt.Errorf("dataset %s: %d image bytes and %d labels for dims %s", name, len(images.Data), len(labels.Data), images.shape())
	}
	d := &Dataset{Name: name, N: n, Rows: rows, Cols: cols, Pixels: images.Data, Labels: labels.Data}
	for _, l := range d.Labels {
		d.Classes = max(d.Classes, int(l)+1)
	}
	return d, nil
}

// ReadDataset reads an images file and a labels file (each gzipped or not)
// into a Dataset named after the images file.
func ReadDataset(imagesPath, labelsPath string) (*Dataset, error) {
	im, err := ReadImages(imagesPath)
	if err != nil {
		return nil, err
	}
	lb, err := ReadLabels(labelsPath)
	if err != nil {
		return nil, err
	}
	d, err := NewDataset(imagesPath, im, lb)
	if err != nil {
		return nil, fmt.Errorf("%w (labels %s)", err, labelsPath)
	}
	return d, nil
}

// DefaultDir returns FashionMNISTDir if it holds the Fashion-MNIST training
// images, and "" otherwise.
func DefaultDir() string {
	if find(FashionMNISTDir, "train-images-idx3-ubyte") != "" {
		return FashionMNISTDir
	}
	return ""
}

// find returns dir/base, dir/base.gz or the MNIST web site's variant with a
// dot (train-images.idx3-ubyte), whichever exists first, or "".
func find(dir, base string) string {
	for _, name := range []string{base + ".gz", base, dotted(base) + ".gz", dotted(base)} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// dotted turns "train-images-idx3-ubyte" into "train-images.idx3-ubyte".
func dotted(base string) string {
	for i := len(base) - len("-idx3-ubyte"); i >= 0; i-- {
		if base[i] == '-' {
			return base[:i] + "." + base[i+1:]
		}
	}
	return base
}

// Load reads an MNIST-shaped IDX data set from dir: the files
//
//	train-images-idx3-ubyte  train-labels-idx1-ubyte
//	t10k-images-idx3-ubyte   t10k-labels-idx1-ubyte
//
// each optionally gzipped (.gz). Training and test images must have the same
// size, and every test label must be a training class; the test set's
// Classes is set to the training set's.
func Load(dir string) (train, test *Dataset, err error) {
	var paths [4]string
	for i, base := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"} {
		if paths[i] = find(dir, base); paths[i] == "" {
			return nil, nil, fmt.Errorf("load %s: no %s or %s.gz: %w", dir, base, base, os.ErrNotExist)
		}
	}
	if train, err = ReadDataset(paths[0], paths[1]); err != nil {
		return nil, nil, err
	}
	if test, err = ReadDataset(paths[2], paths[3]); err != nil {
		return nil, nil, err
	}
	if train.Rows != test.Rows || train.Cols != test.Cols {
		return nil, nil, fmt.Errorf("load %s: training images %dx%d, test images %dx%d", dir, train.Rows, train.Cols, test.Rows, test.Cols)
	}
	if test.Classes > train.Classes {
		return nil, nil, fmt.Errorf("load %s: test label %d not a training class (0 to %d)", dir, test.Classes-1, train.Classes-1)
	}
	test.Classes = train.Classes
	return train, test, nil
}

// Dim returns the number of inputs per sample, Rows·Cols.
func (d *Dataset) Dim() int { return d.Rows * d.Cols }

// Image returns the pixels of sample i, aliasing Pixels.
func (d *Dataset) Image(i int) []uint8 {
	if i < 0 || i >= d.N {
		panic(errIndex)
	}
	k := d.Dim()
	return d.Pixels[i*k : (i+1)*k : (i+1)*k]
}

// Slice returns the samples [lo, hi) as a Dataset sharing d's memory, with
// d's Classes.
func (d *Dataset) Slice(lo, hi int) *Dataset {
	if lo < 0 || hi > d.N || lo >= hi {
		panic(errRange)
	}
	k := d.Dim()
	return &Dataset{
		Name: fmt.Sprintf("%s[%d:%d]", d.Name, lo, hi), N: hi - lo, Rows: d.Rows, Cols: d.Cols, Classes: d.Classes,
		Pixels: d.Pixels[lo*k : hi*k : hi*k], Labels: d.Labels[lo:hi:hi],
	}
}

// scale maps a pixel byte to its input value p/255.
var scale = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(i) / 255
	}
	return t
}()

// Gather copies the samples idx into x (len(idx)·Dim inputs p/255 in
// [0, 1], sample after sample) and y (labels), growing x and y when they
// are too short, and returns them resliced to length.
func (d *Dataset) Gather(x []float32, y []int, idx []int) ([]float32, []int) {
	k := d.Dim()
	x = grow(x, len(idx)*k)
	y = grow(y, len(idx))
	for j, i := range idx {
		im := d.Image(i)
		row := x[j*k : (j+1)*k]
		for p, v := range im {
			row[p] = scale[v]
		}
		y[j] = int(d.Labels[i])
	}
	return x, y
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

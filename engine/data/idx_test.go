package data

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// imagesFile is a 3-image 2x4 IDX file written out byte by byte from the
// format description, independently of Encode.
var imagesFile = []byte{
	0x00, 0x00, 0x08, 0x03, // magic
	0x00, 0x00, 0x00, 0x03, // 3 images
	0x00, 0x00, 0x00, 0x02, // 2 rows
	0x00, 0x00, 0x00, 0x04, // 4 cols
	0, 1, 2, 3, 4, 5, 6, 7,
	8, 9, 10, 11, 12, 13, 14, 15,
	255, 254, 253, 252, 251, 250, 249, 248,
}

var labelsFile = []byte{0x00, 0x00, 0x08, 0x01, 0x00, 0x00, 0x00, 0x03, 2, 0, 1}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func TestIDXRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		dec  func(r *bytes.Reader) (*IDX, error)
		dims []int
		data []byte
	}{
		{"images", imagesFile, func(r *bytes.Reader) (*IDX, error) { return DecodeImages(r) }, []int{3, 2, 4}, imagesFile[16:]},
		{"images-gzip", gz(imagesFile), func(r *bytes.Reader) (*IDX, error) { return DecodeImages(r) }, []int{3, 2, 4}, imagesFile[16:]},
		{"labels", labelsFile, func(r *bytes.Reader) (*IDX, error) { return DecodeLabels(r) }, []int{3}, []byte{2, 0, 1}},
		{"labels-gzip", gz(labelsFile), func(r *bytes.Reader) (*IDX, error) { return DecodeLabels(r) }, []int{3}, []byte{2, 0, 1}},
		{"any-images", imagesFile, func(r *bytes.Reader) (*IDX, error) { return Decode(r) }, []int{3, 2, 4}, imagesFile[16:]},
		{"4-dims", []byte{0, 0, 8, 4, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1, 7, 9},
			func(r *bytes.Reader) (*IDX, error) { return Decode(r) }, []int{1, 1, 2, 1}, []byte{7, 9}},
		{"empty-payload", []byte{0, 0, 8, 1, 0, 0, 0, 0}, func(r *bytes.Reader) (*IDX, error) { return DecodeLabels(r) }, []int{0}, []byte{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := tc.dec(bytes.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !equal(x.Dims, tc.dims) || !bytes.Equal(x.Data, tc.data) {
				t.Fatalf("got dims %v data %v, want %v %v", x.Dims, x.Data, tc.dims, tc.data)
			}
			var buf bytes.Buffer
			if err := Encode(&buf, x); err != nil {
				t.Fatal(err)
			}
			raw := tc.in
			if strings.HasSuffix(tc.name, "gzip") {
				raw = map[bool][]byte{true: imagesFile, false: labelsFile}[len(tc.dims) == 3]
			}
			if !bytes.Equal(buf.Bytes(), raw) {
				t.Errorf("Encode = % x, want % x", buf.Bytes(), raw)
			}
		})
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestIDXErrors(t *testing.T) {
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	corrupt := gz(imagesFile)
	corrupt[len(corrupt)-6] ^= 0xff // CRC-32 in the gzip trailer
	for _, tc := range []struct {
		name   string
		in     []byte
		labels bool
		want   error
		msg    string
	}{
		{"empty", nil, false, ErrTruncated, "header has 0 of 4 magic bytes"},
		{"short-magic", []byte{0, 0, 8}, false, ErrTruncated, "header has 3 of 4 magic bytes"},
		{"labels-as-images", labelsFile, false, ErrBadMagic, "bad magic 0x00000801, want 0x00000803 (unsigned-byte images, 3 dims)"},
		{"images-as-labels", imagesFile, true, ErrBadMagic, "bad magic 0x00000803, want 0x00000801 (unsigned-byte labels, 1 dim)"},
		{"float-type", cat([]byte{0, 0, 0x0d, 3}, imagesFile[4:]), false, ErrBadMagic, "bad magic 0x00000d03"},
		{"not-idx", []byte("P5\n28 28\n255\n"), false, ErrBadMagic, "bad magic 0x50350a32"},
		{"short-dims", imagesFile[:10], false, ErrTruncated, "header has 6 of 12 dimension bytes"},
		{"short-data", imagesFile[:30], false, ErrTruncated, "dims 3x2x4 need 24 data bytes, found 14"},
		{"no-data", imagesFile[:16], false, ErrTruncated, "dims 3x2x4 need 24 data bytes, found 0"},
		{"trailing", cat(labelsFile, []byte{0}), true, ErrTrailing, "trailing data after the 3 data bytes of dims 3"},
		{"too-large", []byte{0, 0, 8, 3, 0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff}, false, ErrTooLarge, "exceed"},
		{"dim-above-int32", []byte{0, 0, 8, 3, 0xe8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, false, ErrTooLarge, "dimension 0 is 3892314112, above the format's 2^31-1"},
		{"huge-claim", []byte{0, 0, 8, 1, 0x40, 0, 0, 0, 1, 2}, true, ErrTruncated, "need 1073741824 data bytes, found 2"},
		{"gzip-truncated", gz(imagesFile)[:30], false, ErrTruncated, "need 24 data bytes"},
		{"gzip-bad-crc", corrupt, false, nil, "checksum"},
		{"gzip-bad-header", []byte{0x1f, 0x8b, 0, 0}, false, nil, "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dec := DecodeImages
			if tc.labels {
				dec = DecodeLabels
			}
			x, err := dec(bytes.NewReader(tc.in))
			if err == nil {
				t.Fatalf("decoded %v, want error", x.Dims)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %q does not wrap %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not contain %q", err, tc.msg)
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, x := range []*IDX{
		{},
		{Dims: []int{2, 2}, Data: []byte{1, 2, 3}},
		{Dims: []int{-1}, Data: nil},
		{Dims: make([]int, 256)},
	} {
		if err := Encode(new(bytes.Buffer), x); err == nil {
			t.Errorf("Encode(dims %v, %d bytes) succeeded, want error", x.Dims, len(x.Data))
		}
	}
}

// writeSet writes an MNIST-shaped set into dir; gzipped selects .gz names.
func writeSet(t *testing.T, dir string, gzipped bool, files map[string][]byte) {
	t.Helper()
	for name, b := range files {
		if gzipped {
			name, b = name+".gz", gz(b)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadErrorsNameFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "train-images-idx3-ubyte")
	os.WriteFile(p, imagesFile[:20], 0o644)
	_, err := ReadImages(p)
	if err == nil || !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "read idx "+p+": truncated") {
		t.Errorf("ReadImages(truncated) = %v, want truncation error naming %s", err, p)
	}
	lp := filepath.Join(dir, "labels")
	os.WriteFile(lp, []byte{0, 0, 8, 1, 0, 0, 0, 2, 1, 1}, 0o644)
	_, err = ReadDataset(p+"x", lp)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadDataset(missing) = %v, want not-exist", err)
	}
	os.WriteFile(p, imagesFile, 0o644)
	_, err = ReadDataset(p, lp)
	if err == nil || !strings.Contains(err.Error(), "3 images but 2 labels") || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), lp) {
		t.Errorf("ReadDataset(3 images, 2 labels) = %v, want count mismatch naming both files", err)
	}
}

func TestLoad(t *testing.T) {
	files := map[string][]byte{
		"train-images-idx3-ubyte": imagesFile,
		"train-labels-idx1-ubyte": labelsFile,
		"t10k-images-idx3-ubyte":  {0, 0, 8, 3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 4, 9, 9, 9, 9, 9, 9, 9, 9},
		"t10k-labels-idx1-ubyte":  {0, 0, 8, 1, 0, 0, 0, 1, 1},
	}
	for _, gzipped := range []bool{false, true} {
		dir := t.TempDir()
		writeSet(t, dir, gzipped, files)
		train, test, err := Load(dir)
		if err != nil {
			t.Fatalf("gzip %v: %v", gzipped, err)
		}
		if train.N != 3 || train.Rows != 2 || train.Cols != 4 || train.Classes != 3 || test.N != 1 || test.Classes != 3 {
			t.Errorf("gzip %v: train %d %dx%d %d classes, test %d %d classes", gzipped, train.N, train.Rows, train.Cols, train.Classes, test.N, test.Classes)
		}
		x, y := train.Gather(nil, nil, []int{2, 0})
		if len(x) != 16 || x[0] != 1 || x[7] != 248.0/255 || x[8] != 0 || x[15] != 7.0/255 || y[0] != 1 || y[1] != 2 {
			t.Errorf("gzip %v: Gather = %v %v", gzipped, x, y)
		}
	}
	// Mixed plain and gzip, and the dotted names of the MNIST web site.
	dir := t.TempDir()
	writeSet(t, dir, true, map[string][]byte{"train-images.idx3-ubyte": imagesFile, "t10k-labels-idx1-ubyte": files["t10k-labels-idx1-ubyte"]})
	writeSet(t, dir, false, map[string][]byte{"train-labels.idx1-ubyte": labelsFile, "t10k-images-idx3-ubyte": files["t10k-images-idx3-ubyte"]})
	if _, _, err := Load(dir); err != nil {
		t.Errorf("mixed names: %v", err)
	}

	for _, tc := range []struct {
		name   string
		change map[string][]byte
		msg    string
	}{
		{"missing", map[string][]byte{"t10k-labels-idx1-ubyte": nil}, "no t10k-labels-idx1-ubyte or t10k-labels-idx1-ubyte.gz"},
		{"test-size", map[string][]byte{"t10k-images-idx3-ubyte": {0, 0, 8, 3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 5}}, "training images 2x4, test images 1x1"},
		{"test-label", map[string][]byte{"t10k-labels-idx1-ubyte": {0, 0, 8, 1, 0, 0, 0, 1, 7}}, "test label 7 not a training class (0 to 2)"},
		{"bad-magic", map[string][]byte{"train-labels-idx1-ubyte": imagesFile}, "train-labels-idx1-ubyte: bad magic 0x00000803, want 0x00000801"},
		{"count", map[string][]byte{"train-labels-idx1-ubyte": {0, 0, 8, 1, 0, 0, 0, 2, 0, 1}}, "3 images but 2 labels"},
		{"zero-rows", map[string][]byte{"train-images-idx3-ubyte": {0, 0, 8, 3, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 4}}, "images are 0x4 pixels"},
		{"no-samples", map[string][]byte{
			"train-images-idx3-ubyte": {0, 0, 8, 3, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 4},
			"train-labels-idx1-ubyte": {0, 0, 8, 1, 0, 0, 0, 0}}, "no samples"},
	} {
		dir := t.TempDir()
		f := map[string][]byte{}
		for k, v := range files {
			f[k] = v
		}
		for k, v := range tc.change {
			if v == nil {
				delete(f, k)
			} else {
				f[k] = v
			}
		}
		writeSet(t, dir, false, f)
		_, _, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: Load = %v, want error containing %q", tc.name, err, tc.msg)
		}
	}
}

// TestFashionMNIST reads the real data set installed by Debian's
// dataset-fashion-mnist package and checks the published figures: 60,000
// training and 10,000 test images of 28x28 pixels in 10 balanced classes
// (6,000 and 1,000 per class; Xiao, Rasul and Vollgraf 2017).
func TestFashionMNIST(t *testing.T) {
	dir := DefaultDir()
	if dir == "" {
		if os.Getenv("SCALEPLAN_REQUIRE_DEPS") == "1" {
			t.Fatalf("SCALEPLAN_REQUIRE_DEPS=1 but Fashion-MNIST is not installed at %s", FashionMNISTDir)
		}
		t.Skipf("skipping: Fashion-MNIST not installed at %s (apt-get install dataset-fashion-mnist)", FashionMNISTDir)
	}
	train, test, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		d        *Dataset
		n, class int
	}{{train, 60000, 6000}, {test, 10000, 1000}} {
		if tc.d.N != tc.n || tc.d.Rows != 28 || tc.d.Cols != 28 || tc.d.Classes != 10 {
			t.Errorf("%s: %d samples %dx%d %d classes, want %d 28x28 10", tc.d.Name, tc.d.N, tc.d.Rows, tc.d.Cols, tc.d.Classes, tc.n)
		}
		var count [256]int
		for _, l := range tc.d.Labels {
			count[l]++
		}
		for c := range 10 {
			if count[c] != tc.class {
				t.Errorf("%s: class %d has %d samples, want %d", tc.d.Name, c, count[c], tc.class)
			}
		}
		var hi uint8
		for _, p := range tc.d.Pixels {
			hi = max(hi, p)
		}
		if hi != 255 {
			t.Errorf("%s: brightest pixel %d, want 255", tc.d.Name, hi)
		}
	}
}

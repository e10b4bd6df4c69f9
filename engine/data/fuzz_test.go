package data

import (
	"bytes"
	"testing"
)

// FuzzIDX feeds arbitrary bytes to the IDX decoder: it must never panic,
// and whatever it accepts must encode back to the same bytes (when the
// input was not gzipped) with Π Dims data bytes. The seed corpus is in
// testdata/fuzz/FuzzIDX: valid images and labels files, plain and gzipped,
// and one file for each kind of error.
func FuzzIDX(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		x, err := Decode(bytes.NewReader(in))
		for _, dec := range []func(*bytes.Reader) (*IDX, error){
			func(r *bytes.Reader) (*IDX, error) { return DecodeImages(r) },
			func(r *bytes.Reader) (*IDX, error) { return DecodeLabels(r) },
		} {
			if y, err2 := dec(bytes.NewReader(in)); err2 == nil && (err != nil || y.Magic() != x.Magic()) {
				t.Fatalf("typed decoder accepted what Decode did not: %v", err)
			}
		}
		if err != nil {
			return
		}
		n := 1
		for _, d := range x.Dims {
			n *= d
		}
		if n != len(x.Data) {
			t.Fatalf("dims %v with %d data bytes", x.Dims, len(x.Data))
		}
		if len(in) >= 2 && in[0] == 0x1f && in[1] == 0x8b {
			return
		}
		var buf bytes.Buffer
		if err := Encode(&buf, x); err != nil {
			t.Fatalf("Encode of decoded file: %v", err)
		}
		if !bytes.Equal(buf.Bytes(), in) {
			t.Fatalf("round trip changed the bytes:\n in % x\nout % x", in, buf.Bytes())
		}
		// An images file with matching labels forms a Dataset exactly when
		// no dimension is zero, and its samples can be gathered.
		if x.Magic() == MagicImages && x.Dims[0] <= 1<<16 {
			lb := &IDX{Dims: []int{x.Dims[0]}, Data: make([]byte, x.Dims[0])}
			d, err := NewDataset("fuzz", x, lb)
			if full := x.Dims[0] > 0 && x.Dims[1] > 0 && x.Dims[2] > 0; (err == nil) != full {
				t.Fatalf("NewDataset(dims %v) error %v", x.Dims, err)
			}
			if err == nil {
				d.Gather(nil, nil, []int{0, d.N - 1})
			}
		}
	})
}

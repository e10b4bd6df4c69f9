package fit

import (
	"bytes"
	"testing"

	"scaleplan/internal/calib"
)

func FuzzReadCalibration(f *testing.F) {
	f.Add([]byte("throughput:\n  - model: m\n    devices: 1\n    v0: 258.1\n    t: 54 ms\n    r2: 0.99\n    points: 6\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := calib.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := c.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := calib.Read(&buf); err != nil {
			t.Fatalf("valid calibration does not read back: %v\n%s", err, buf.Bytes())
		}
	})
}

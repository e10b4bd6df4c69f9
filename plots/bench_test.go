package plots

import "testing"

// BenchmarkAll builds the seven charts of the tests and writes each as PNG
// and SVG: the work of `scaleplan plot` for a full report.
func BenchmarkAll(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		for _, c := range allCharts(b) {
			if _, err := WriteAll(dir, c.Kind, c.Plot); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSave writes one chart in each format.
func BenchmarkSave(b *testing.B) {
	c, err := TimeToTrain(scalingData())
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for _, ext := range []string{"png", "svg"} {
		b.Run(ext, func(b *testing.B) {
			for b.Loop() {
				if err := Save(c.Plot, dir+"/time."+ext, Width, Height); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

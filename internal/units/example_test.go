package units_test

import (
	"fmt"

	"scaleplan/internal/units"
)

func Example() {
	link, _ := units.ParseBitsPerSec("100 Gbit/s")
	grad := 97.5 * units.MiB // ResNet-50's fp32 gradient, about
	t := units.Seconds(float64(grad) / float64(link.Bytes()))
	fmt.Println(link.Bytes(), grad, t)
	// Output: 12.5 GB/s 97.5 MiB 8.179 ms
}

package tables_test

import (
	"os"
	"strings"

	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/internal/tables"
)

// The throughput law fitted to four batches measured on one device,
// which follow v = b / (b/v0 + t) with v0 = 400 samples/s and t = 20 ms
// (32 samples in 0.1 s, 64 in 0.18 s, ...), as fit prints it in csv.
func ExampleFit() {
	csv := "model,device,precision,batch,samples_per_s\n" +
		"resnet50,v100-sxm2-16gb,fp32,32,320\n" +
		"resnet50,v100-sxm2-16gb,fp32,64,355.5555556\n" +
		"resnet50,v100-sxm2-16gb,fp32,128,376.4705882\n" +
		"resnet50,v100-sxm2-16gb,fp32,256,387.8787879\n"
	lg, err := logs.Read(strings.NewReader(csv), "sweep.csv")
	if err != nil {
		panic(err)
	}
	rep, err := fit.Fit([]*logs.Log{lg}, &fit.Options{})
	if err != nil {
		panic(err)
	}
	if err := tables.Write(os.Stdout, "csv", tables.Fit(rep, nil)); err != nil {
		panic(err)
	}
	// Output:
	// model,device,devices,precision,points,excluded,batches,v0,v0_ci95_low,v0_ci95_high,t_s,t_ci95_low_s,t_ci95_high_s,r2,note
	// resnet50,v100-sxm2-16gb,1,fp32,4,0,32–256,400,400,400,0.02,0.02,0.02,1,
}

package logs_test

import (
	"bytes"
	"math"
	"testing"

	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/internal/calib"
)

// checkLog fails t if a Log breaks its invariants, then fits it: no input
// may make a reader or a fit panic or return an impossible figure.
func checkLog(t *testing.T, data []byte, lg *logs.Log, err error) {
	t.Helper()
	if err != nil {
		if lg != nil {
			t.Fatalf("error %v with a log", err)
		}
		return
	}
	lines := bytes.Count(data, []byte("\n")) + 1
	if len(lg.Lines) != len(lg.Records) {
		t.Fatalf("%d lines for %d records", len(lg.Lines), len(lg.Records))
	}
	for i, r := range lg.Records {
		if err := r.Validate(); err != nil {
			t.Fatalf("record %d does not validate: %v", i, err)
		}
		if err := logs.CheckBounds(&r); err != nil {
			t.Fatalf("record %d is out of bounds: %v", i, err)
		}
		if lg.Lines[i] < 1 || lg.Lines[i] > lines {
			t.Fatalf("record %d at line %d of %d", i, lg.Lines[i], lines)
		}
	}
	if lg.Malformed < len(lg.Errors) || len(lg.Errors) > logs.MaxQuoted {
		t.Fatalf("%d malformed, %d quoted", lg.Malformed, len(lg.Errors))
	}
	for _, e := range lg.Errors {
		if e.Line < 1 || e.Line > lines+1 {
			t.Fatalf("malformed line %d of %d", e.Line, lines)
		}
	}
	rep, err := fit.Fit([]*logs.Log{lg}, &fit.Options{GradientSize: 1e8})
	if err != nil {
		return
	}
	for _, g := range rep.Groups {
		if f := g.Fit; f != nil && (!(f.V0 > 0) || math.IsInf(f.V0, 0) || !(f.T >= 0) || math.IsInf(float64(f.T), 0)) {
			t.Fatalf("%v: v0 %v, t %v", g.Key, f.V0, f.T)
		}
	}
	for _, s := range rep.Steps {
		if f := s.Fit; f != nil && (!(f.SMin > 0) || !(f.BNoise >= 0)) {
			t.Fatalf("steps %s: S_min %v, B_noise %v", s.Model, f.SMin, f.BNoise)
		}
	}
	var buf bytes.Buffer
	if err := rep.Calibration().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if c := rep.Calibration(); len(c.Throughput)+len(c.Comm)+len(c.Steps) > 0 {
		if _, err := calib.Read(&buf); err != nil {
			t.Fatalf("calibration of a fit does not read back: %v\n%s", err, buf.Bytes())
		}
	}
}

func fuzzFormat(f *testing.F, format logs.Format, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lg, err := logs.ReadAs(bytes.NewReader(data), "fuzz", format)
		checkLog(t, data, lg, err)
	})
}

func FuzzRead(f *testing.F) {
	f.Add([]byte("batch,samples_per_s\n8,100\n16,150\n32,180\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lg, err := logs.Read(bytes.NewReader(data), "fuzz")
		checkLog(t, data, lg, err)
	})
}

func FuzzReadBenchlog(f *testing.F) {
	fuzzFormat(f, logs.Benchlog, `{"kind":"measurement","model":"m","workers":1,"batch":8,"step_time_s":0.1}`+"\n"+`{"kind":"measurement","model":"m","workers":1,"batch":16,"step_time_s":0.15}`)
}

func FuzzReadCSV(f *testing.F) {
	fuzzFormat(f, logs.CSV, "model,devices,batch,step_time (ms)\nm,1,8,85\nm,1,16,116\nm,1,32,180\n", "global_batch;steps_to_target;reached\n64;1000;yes\n128;600;yes\n256;400;no\n")
}

// FuzzReadMLPerf reads every input as both MLPerf formats, v0.7 and later
// (":::MLLOG") and v0.6 (":::MLL"), which share the reader behind their
// line decoders.
func FuzzReadMLPerf(f *testing.F) {
	f.Add([]byte(`:::MLLOG {"namespace": "", "time_ms": 1000, "event_type": "INTERVAL_START", "key": "epoch_start", "value": null, "metadata": {"epoch_num": 1}}`))
	f.Add([]byte(":::MLL 1558640449.212 global_batch_size: {\"value\": 256, \"metadata\": {}}\n" +
		":::MLL 1558640450.000 epoch_start: {\"value\": null, \"metadata\": {\"epoch_num\": 1}}\n" +
		":::MLL 1558640460.5 epoch_stop: {\"value\": null, \"metadata\": {\"epoch_num\": 1}}\n"))
	f.Add([]byte(`:::MLLOG {"time_ms": 1, "key": "submission_platform", "value": "POD64", "metadata": {}}
:::MLLOG {"time_ms": 2, "key": "global_batch_size", "value": 3840, "metadata": {}}
:::MLLOG {"time_ms": 3, "key": "gradient_accumulation_steps", "value": 3, "metadata": {}}
:::MLLOG {"time_ms": 4, "key": "epoch_start", "value": null, "metadata": {"epoch_num": 1}}
:::MLLOG {"time_ms": 11875, "key": "epoch_stop", "value": null, "metadata": {"epoch_num": 1}}
`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []logs.Format{logs.MLPerf, logs.MLPerfV06} {
			lg, err := logs.ReadAs(bytes.NewReader(data), "fuzz", format)
			checkLog(t, data, lg, err)
		}
	})
}

func FuzzReadHorovod(f *testing.F) {
	fuzzFormat(f, logs.Horovod, "Model: resnet50\nBatch size: 32\nNumber of GPUs: 2\nIter #0: 100.0 img/sec per GPU\nImg/sec per GPU: 100.0 +-1.0\nTotal img/sec on 2 GPU(s): 200.0 +-2.0\n")
}

func FuzzReadTFCNN(f *testing.F) {
	fuzzFormat(f, logs.TFCNN, "Model:       resnet50\nBatch size:  64 global\n             32 per device\nDevices:     ['/gpu:0', '/gpu:1']\n10\timages/sec: 300.1 +/- 0.5 (jitter = 1.2)\t7.9\ntotal images/sec: 300.00\n")
}

func FuzzReadHFTrainer(f *testing.F) {
	fuzzFormat(f, logs.HFTrainer, "***** Running training *****\n  Num Epochs = 2\n  Instantaneous batch size per device = 8\n  Total train batch size (w. parallel, distributed & accumulation) = 16\n  Gradient Accumulation steps = 1\n  Total optimization steps = 10\n{'loss': 1.0, 'epoch': 0.5}\n{'eval_loss': 0.5, 'eval_accuracy': 0.75, 'eval_runtime': 1.2, 'epoch': 1.0}\n{'train_runtime': 5.0, 'train_samples_per_second': 32.0, 'epoch': 2.0, 'step': 10}\n")
}

func FuzzReadMegatron(f *testing.F) {
	fuzzFormat(f, logs.Megatron, "using world size: 8, data-parallel size: 4, context-parallel size: 1, tensor-model-parallel size: 2, pipeline-model-parallel size: 1\n"+
		logs.MgArgumentsStart+"\n  bf16 ......... True\n  micro_batch_size ..... 2\n  seq_length ...... 4096\n"+logs.MgArgumentsEnd+"\n"+
		"[before the start of training step] datetime: 2026-11-26 06:00:02 \n"+
		" [2026-11-26 06:01:00] iteration       10/     100 | consumed samples:         1280 | elapsed time per iteration (ms): 14533.9 | global batch size:   128 | lm loss: 1.0E+01 |\n"+
		" [2026-11-26 06:02:05] iteration       20/     100 | consumed samples:         2560 | elapsed time per iteration (ms): 6503.6 | global batch size:   128 | lm loss: 9.9E+00 |\n"+
		"[Rank 0] (after 10 iterations) memory (MB) | allocated: 30210.2 | max allocated: 51234.5 | reserved: 55000.0 | max reserved: 55000.0\n"+
		"[after training is done] datetime: 2026-11-26 06:12:40 \n")
}

func FuzzReadDeepSpeed(f *testing.F) {
	fuzzFormat(f, logs.DeepSpeed, "[2026-11-26 06:00:00,000] [INFO] [config.py:960:print] DeepSpeedEngine configuration:\n"+
		"[2026-11-26 06:00:00,000] [INFO] [config.py:964:print]   bfloat16_enabled ............. True\n"+
		"[2026-11-26 06:00:00,000] [INFO] [config.py:964:print]   train_batch_size ............. 64\n"+
		"[2026-11-26 06:00:00,000] [INFO] [config.py:964:print]   train_micro_batch_size_per_gpu  16\n"+
		"[2026-11-26 06:00:00,000] [INFO] [config.py:964:print]   world_size ................... 4\n"+
		"[2026-11-26 06:00:01,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]\n"+
		"[2026-11-26 06:00:01,000] [INFO] [timer.py:264:stop] epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=100.0, CurrSamplesPerSec=101.0, MemAllocated=1.0GB, MaxMemAllocated=2.0GB\n")
}

func FuzzReadLightning(f *testing.F) {
	fuzzFormat(f, logs.Lightning, "train/time,train/batches,train/samples,epoch,step,train/device/samples_per_sec,train/samples_per_sec,loss\n"+
		"5,100,3200,0,99,640,1280,\n,,,0,99,,,2.5\n10,200,6400,0,199,640,1280,\n1,10,320,0,9,,,\n")
}

func FuzzReadTorchtitan(f *testing.F) {
	fuzzFormat(f, logs.Torchtitan, "[titan] 2026-11-20 10:00:00,101 - root - INFO - Starting job: x\n"+
		"[titan] 2026-11-20 10:00:02,311 - root - INFO - Building device mesh with parallelism: pp=1, dp_replicate=1, dp_shard=2, cp=1, tp=2, ep=1\n"+
		"[titan] 2026-11-20 10:00:02,312 - root - INFO - Building 2-D device mesh with ['dp_shard', 'tp'], [2, 2]\n"+
		"[titan] 2026-11-20 10:00:05,420 - root - INFO - CUDA capacity: NVIDIA H100 80GB HBM3 with 79.11GiB memory\n"+
		"[titan] 2026-11-20 10:00:05,502 - root - INFO - Model llama3 debugmodel size: 6,163,712 total parameters\n"+
		"[titan] 2026-11-20 10:00:09,930 - root - INFO - Mixed precision training is handled by fully_shard\n"+
		"[titan] 2026-11-20 10:00:09,931 - root - INFO - Trainer is initialized with local batch size 8, global batch size 16, gradient accumulation steps 1, sequence length 2048, total steps 20 (warmup 2).\n"+
		"[titan] 2026-11-20 10:00:09,933 - root - INFO - Training starts at step 1\n"+
		"[titan] 2026-11-20 10:00:11,000 - root - INFO - \x1b[31mstep:  1  \x1b[32mloss:  8.1383  memory:  8.29GiB(12.96%)  tps: 8,550  tflops: 0.61  mfu: 0.21%\x1b[39m\n"+
		"[titan] 2026-11-20 10:00:12,000 - root - INFO - step: 10  loss:  8.0278  grad_norm:  1.3883  memory:  8.30GiB(12.97%)  tps: 105,974  tflops: 7.59  mfu: 2.54%\n"+
		"[titan] 2026-11-20 10:00:13,000 - root - INFO - validate step: 10  loss:  8.0  memory:  8.30GiB(12.97%)  tps: 205,974\n"+
		"[titan] 2026-11-20 10:00:14,000 - root - INFO - step: 20  loss:  7.5813  memory:  8.30GiB(12.97%)  wps: 107,242  mfu: 2.57%\n"+
		"[titan] 2026-11-20 10:00:15,000 - root - INFO - Training completed\n")
}

func FuzzReadNCCL(f *testing.F) {
	fuzzFormat(f, logs.NCCLTests, "# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 1 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"+
		"#  Rank  0 Group  0 Pid  41107 on node01 device  0 [0x18] NVIDIA H100 80GB HBM3\n#  Rank  1 Group  0 Pid  41108 on node02 device  0 [0x18] NVIDIA H100 80GB HBM3\n"+
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"+
		"           8             2     float     sum      -1    28.41    0.00    0.00      0    27.90    0.00    0.00      0\n"+
		"        1024           256     float     sum      -1    30.12    0.03    0.03      0    29.90    0.03    0.03      0\n"+
		"# Avg bus bandwidth    : 0.015\n")
}

func FuzzReadTorchvision(f *testing.F) {
	fuzzFormat(f, logs.Torchvision, "Namespace(model='resnet50', device='cuda', batch_size=32, world_size=2, distributed=True)\n"+
		"Epoch: [0]  [ 20/100]  eta: 0:00:10  lr: 0.1  img/s: 300.0  loss: 6.9 (6.9)  time: 0.1000  data: 0.0010  max mem: 100\n"+
		"Epoch: [0] Total time: 0:00:10\nTest:  Acc@1 1.000 Acc@5 5.000\nTraining time 0:00:12\n")
}

package logs

import (
	"bytes"
	"fmt"
	"math"
	"testing"
)

// BenchmarkRead reads the sample logs of every format.
func BenchmarkRead(b *testing.B) {
	for _, f := range []string{"bench_resnet50.jsonl", "mlperf_resnet.log", "horovod_resnet50.txt", "tf_cnn_resnet50.txt", "seed003.csv", "torchvision_resnet18_cpu.txt", "hf_trainer_vit_ddp.txt", "megatron_gpt_tp2.txt", "deepspeed_bert_zero2.txt", "lightning_ddp_metrics.csv", "torchtitan_llama3_8b.txt"} {
		b.Run(f, func(b *testing.B) {
			for b.Loop() {
				if _, err := ReadFile("../testdata/" + f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadTorchvision90 reads the output of a whole ImageNet run of
// torchvision's train.py as the reader would meet it: 90 epochs of 5,005
// iterations printed every 10 (45,090 training lines, 8.1 MB), each epoch
// followed by its evaluation.
func BenchmarkReadTorchvision90(b *testing.B) {
	var log bytes.Buffer
	log.WriteString("Namespace(data_path='/data/imagenet', model='resnet50', device='cuda', batch_size=32, epochs=90, amp=False, world_size=8, distributed=True)\n")
	for e := range 90 {
		for i := 0; i < 5005; i += 10 {
			fmt.Fprintf(&log, "Epoch: [%d]  [%4d/5005]  eta: 0:16:05  lr: 0.1  img/s: 1623.4571  loss: 6.8812 (6.9010)  acc1: 0.0000 (0.1187)  acc5: 3.1250 (0.5793)  time: 0.1931  data: 0.0012  max mem: 10163\n", e, i)
		}
		fmt.Fprintf(&log, "Epoch: [%d] Total time: 0:16:25\nTest:  Total time: 0:00:21\nTest:  Acc@1 %.3f Acc@5 %.3f\n", e, 0.8*float64(e), 0.9*float64(e))
	}
	log.WriteString("Training time 1 day, 1:10:45\n")
	data := log.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		lg, err := Read(bytes.NewReader(data), "train.log")
		if err != nil || len(lg.Records) != 90 {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadHFTrainer100k reads the Trainer's output of a run of
// 100,000 steps logged at every step (logging_steps=1), each dictionary
// after the progress bar's carriage returns, with an evaluation every
// 1,000 steps: 100,107 lines, 15 MB.
func BenchmarkReadHFTrainer100k(b *testing.B) {
	var log bytes.Buffer
	log.WriteString("***** Running training *****\n  Num examples = 3,200,000\n  Num Epochs = 1\n  Instantaneous batch size per device = 4\n" +
		"  Total train batch size (w. parallel, distributed & accumulation) = 32\n  Gradient Accumulation steps = 1\n  Total optimization steps = 100,000\n")
	for s := 1; s <= 100000; s++ {
		fmt.Fprintf(&log, "\r%3d%%|███       | %d/100000 [1:02:03<2:01:11, 13.1it/s]\r                                        \r{'loss': 2.3141, 'grad_norm': 1.0729, 'learning_rate': 4.99e-05, 'epoch': %.2f}\n", s/1000, s, float64(s)/1e5)
		if s%1000 == 0 {
			fmt.Fprintf(&log, "{'eval_loss': 2.2, 'eval_accuracy': 0.%03d, 'eval_runtime': 12.5, 'eval_samples_per_second': 80.0, 'eval_steps_per_second': 2.5, 'epoch': %.2f, 'step': %d}\n", s/100, float64(s)/1e5, s)
		}
	}
	log.WriteString("{'train_runtime': 9001.5, 'train_samples_per_second': 355.5, 'train_steps_per_second': 11.11, 'train_loss': 2.0, 'epoch': 1.0}\n")
	data := log.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		lg, err := Read(bytes.NewReader(data), "train.log")
		if err != nil || len(lg.Records) != 1 || len(lg.Runs[0].Evals) != 100 {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadMegatron100k reads Megatron-LM's output of a run of
// 100,000 iterations logged at every one: 100,005 lines, 33 MB.
func BenchmarkReadMegatron100k(b *testing.B) {
	var log bytes.Buffer
	log.WriteString("using world size: 64, data-parallel size: 8, context-parallel size: 1, tensor-model-parallel size: 4, pipeline-model-parallel size: 2\n" +
		mgArgumentsStart + "\n  bf16 ......... True\n  micro_batch_size ..... 1\n  seq_length ...... 4096\n" + mgArgumentsEnd + "\n")
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&log, " [2026-11-26 06:01:00] iteration %8d/  100000 | consumed samples: %12d | elapsed time per iteration (ms): 6503.6 | throughput per GPU (TFLOP/s/GPU): 412.3 | learning rate: 2.999876E-04 | global batch size:   512 | lm loss: 2.345678E+00 | loss scale: 1.0 | grad norm: 0.312 | number of skipped iterations:   0 | number of nan iterations:   0 |\n", i, 512*i)
	}
	data := log.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		lg, err := Read(bytes.NewReader(data), "train.log")
		if err != nil || len(lg.Records) != 1 || lg.Records[0].Steps != 99999 {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadLightning100k reads a Lightning metrics.csv of a training of
// 100,000 batches on eight devices with the ThroughputMonitor logging at
// every batch (log_every_n_steps=1), a row of the model's loss after each.
func BenchmarkReadLightning100k(b *testing.B) {
	var log bytes.Buffer
	log.WriteString("train/time,train/batches,train/samples,epoch,step,train_loss,train/device/batches_per_sec,train/device/samples_per_sec,train/batches_per_sec,train/samples_per_sec\n")
	for i := 1; i <= 100000; i++ {
		t := 0.05 * float64(i)
		if i < 100 {
			fmt.Fprintf(&log, "%.4f,%d,%d,0,%d,,,,,\n", t, i, 64*i, i-1)
		} else {
			fmt.Fprintf(&log, "%.4f,%d,%d,0,%d,,20,1280,160,10240\n", t, i, 64*i, i-1)
		}
		fmt.Fprintf(&log, ",,,0,%d,2.345678,,,,\n", i-1)
	}
	data := log.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		lg, err := Read(bytes.NewReader(data), "metrics.csv")
		if err != nil || len(lg.Records) != 1 || lg.Records[0].Steps != 99900 || lg.Records[0].Workers != 8 {
			b.Fatal(err, lg.Records)
		}
	}
}

// BenchmarkReadTorchtitan100k reads the output of a torchtitan run that
// logs every one of its 100,000 steps (metrics.log_freq 1) with colours,
// as rank 0 prints it under torchrun: 100,000 step lines of 22 MB.
func BenchmarkReadTorchtitan100k(b *testing.B) {
	const pre = "[rank0]:[titan] 2026-11-20 10:00:00,000 - root - INFO - "
	var log bytes.Buffer
	log.WriteString(pre + "Building device mesh with parallelism: pp=1, dp_replicate=1, dp_shard=8, cp=1, tp=1, ep=1, etp=1\n")
	log.WriteString(pre + "CUDA capacity: NVIDIA H100 80GB HBM3 with 79.11GiB memory\n")
	log.WriteString(pre + "Trainer is initialized with local batch size 2, global batch size 16, gradient accumulation steps 1, sequence length 8192, total steps 100000 (warmup 2000).\n")
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&log, pre+"\x1b[31mstep: %2d  \x1b[32mloss: %7.4f  \x1b[38;2;255;165;0mgrad_norm: %7.4f  \x1b[38;2;54;234;195mmemory: 58.71GiB(74.21%%)  \x1b[34mtps: 8,000  \x1b[36mtflops: 463.39  \x1b[35mmfu: 46.85%%\x1b[39m\n",
			i, 2+1/float64(i), 0.5)
	}
	data := log.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		lg, err := Read(bytes.NewReader(data), "train.log")
		if err != nil || len(lg.Records) != 1 || lg.Records[0].Steps != 99999 || math.Abs(lg.Records[0].SamplesPerSec/(8000*8/8192.0)-1) > 1e-9 {
			b.Fatal(err, lg.Records)
		}
	}
}

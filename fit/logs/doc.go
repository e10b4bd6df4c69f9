// Package logs reads training logs into bench log records, one small
// reader per format, for package fit to fit.
//
// Read detects the format of a log and turns it into bench log records
// (internal/benchlog): the scaleplan bench log itself, CSV with a header,
// MLPerf Training result logs (":::MLLOG" lines, and v0.6's ":::MLL"
// lines; benchmark names become the catalogue's model names), the output
// of Horovod's PyTorch synthetic benchmark, of tf_cnn_benchmarks, of
// torchvision's reference train.py, of the Hugging Face Trainer, of
// Megatron-LM, of DeepSpeed's engine and of torchtitan, and PyTorch
// Lightning's metrics.csv with its ThroughputMonitor columns, nccl-tests'
// output (Log.Collectives) and tables of step times per placement of
// devices over nodes (Log.Placements, the Pollux artifact's traces);
// torchvision's, the Trainer's, Megatron's and torchtitan's also give
// training runs (Log.Runs).
// Malformed lines are counted and the first MaxQuoted kept with their line
// numbers; a log without a usable record is an error (ErrNoRecords) that
// says what was expected.
//
// # Limits
//
// No input makes a reader hold more than bounded memory or quote more
// than 80 bytes of it in a message (longer text is cut, followed by
// "…(N bytes)"). A line over MaxLineBytes (1 MiB; a file of NULs, a
// binary file) ends the reading with an error naming its line. CSV,
// bench logs and placement tables are read line by line, up to MaxBytes
// (4 GiB); the other formats are read whole, up to MaxWholeBytes (256
// MiB). A log may give at most MaxRecords (500,000) records (placement
// rows included); past AggregateRows (10^5) CSV
// measurement rows, the rows are merged into one measurement per
// configuration and batch at their mean throughput, and Log.Notes says
// so. Going over a limit is an error wrapping ErrLimit.
//
// Every reader refuses, as a malformed line with its value, a throughput
// that is not finite and above 0 or exceeds MaxDeviceThroughput (1e9
// samples/s per device), a step time outside [MinStepTime, MaxStepTime]
// (1 ns to 1e6 s), a batch over MaxBatch (2^30 samples) and a device count
// over MaxDevices (10^7). An MLPerf run whose run_stop has no run_start
// before it, or is not after it in time, is refused.
//
// ReadProfiles reads per-operator profiles: the file `bench --framework
// torch --profile` writes beside its log (torch.profiler's key_averages
// per model, precision and batch) and Chrome traces of torch.profiler;
// AtenClass gives an aten operator's class (model.OpKind's names).
//
// Nothing in the package reads the clock or a global random source: the
// same bytes give the same log.
package logs

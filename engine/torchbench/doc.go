// Package torchbench measures the training throughput of PyTorch models
// and writes it as a bench log (internal/benchlog) for fit to read.
//
// It embeds torchbench.py, a standalone Python 3 script that needs only
// torch and torchvision. The script trains for real (forward, loss,
// backward, optimizer step) on synthetic data made on the device, or on
// images from a torchvision ImageFolder, for the catalogue's models that
// torch and torchvision provide (see Models). For each model, precision
// and per-device batch b it runs warm-up steps, then timed steps, and
// writes a measurement record:
//
//	step_time_s      mean of the timed steps' times
//	step_time_std_s  their sample standard deviation
//	samples_per_s    global_batch / step_time_s,  global_batch = workers × b
//	peak_memory_bytes
//
// Steps are timed with CUDA events on a GPU and with time.perf_counter on
// the CPU. Peak memory is torch.cuda.max_memory_allocated on a GPU and the
// process's peak resident set size on the CPU. Batches are swept in
// increasing order; the first that runs out of memory gets an oom record
// and ends the sweep of that model and precision.
//
// With several workers (GPUs, or NProc on the CPU with the gloo backend)
// the script trains with DistributedDataParallel under
// torch.distributed.run, and also times steps under model.no_sync(),
// which skip the gradient all-reduce, to estimate its share:
//
//	phases.allreduce_s ≈ max(0, step − no-sync step)
//
// Across machines every node runs the script with the same options but
// Options.NodeRank, as with torchrun's static rendezvous (--nnodes,
// --node_rank, --master_addr, --master_port): node rank 0 hosts it at
// MasterAddr:MasterPort, the world is Nodes × NProc workers over
// Options.Backend (nccl on CUDA, gloo on the CPU by default), and node
// rank 0 alone writes the log, whose records give the placement (nodes,
// devices_per_node, workers, transport); Run and Bench on the other nodes
// write nothing.
//
// Such measurements fit the throughput law
//
//	1/v = 1/v0 + t/b
//
// of fit, with v the throughput at per-device batch b, v0 the throughput
// at infinite batch and t the fixed time of a step.
//
// Run finds an interpreter with torch (FindPython), runs the script,
// checks every record it wrote with benchlog.Decode and moves the log
// into place atomically, so that a failed run leaves an existing file as
// it was. docs/torchbench-gpu.md gives the command lines of a GPU sweep.
package torchbench

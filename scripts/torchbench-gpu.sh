#!/bin/sh
# torchbench-gpu.sh runs the GPU sweep of engine/torchbench/torchbench.py
# that testdata/measurements/ holds the results of (docs/torchbench.md): the
# engine's MLP and CNN, ResNet-50, the Transformer (base), EfficientNet-B4
# and Mask R-CNN on one GPU, each precision from per-device batch 8 (4 for
# EfficientNet-B4, 1 for Mask R-CNN) up to the first out-of-memory.
#
# Usage: scripts/torchbench-gpu.sh DIR [RUN [SWEEP]]
#
# SWEEP picks the groups: "first" (the default) is the sweep above, in
# eager PyTorch and the default memory format; "tuned" measures what
# training on a GPU is usually run with, and what the first left out:
# ResNet-50 and EfficientNet-B4 in channels_last, amp-bf16, Mask R-CNN in
# amp-fp16, and one torch.compile group. "one" takes the groups of both
# that the catalogue's checks use most (ResNet-50 in fp32, amp-fp16 and
# channels_last, the Transformer, EfficientNet-B4, Mask R-CNN in amp-fp16,
# the CNN) into one call of about eight minutes, for a session lent a
# single call's worth of GPU time. "rest" measures, in about four
# minutes, what "one" leaves out of the other two on a card that ran it:
# ResNet-50 in tf32 and in channels_last amp-bf16, the Transformer in
# amp-bf16, and the MLP (torch.compile stays out: its compilation took most
# of a group's time on the H200).
#
# Two sweeps serve the per-operator calibration (docs/compute-calibration.md)
# and the GPT shapes, each a call of at most about seven minutes. "profile"
# writes torch.profiler's per-operator table (--profile, a .profile.json
# beside each log) of ResNet-50 at batch 256 in amp-fp16 in both memory
# formats and in tf32 (where NCHW's extra time goes), the Transformer
# (base) in amp-fp16, and GPT-3 Small and Medium in amp-bf16 on sequences
# of 1,024 tokens: the tables `fit` reads to calibrate a device's operator
# classes. "gpt" measures throughput and peak memory of the four GPT-3
# shapes the catalogue's LLM planning starts from (125M to 1.3B) on
# sequences of 2,048 tokens, from batch 1 to the first out-of-memory, in
# amp-bf16, and GPT-3 Small in tf32. "squad" measures BERT-large and
# BERT-base as DeepLearningExamples' run_squad.py builds them, on 384-token
# sequences in amp-fp16 and tf32, at the batches Lambda's and
# DeepLearningExamples' published tables ran (docs/validation-transformer.md:
# whether their fixed time a step is PyTorch's or their program's).
# "maskrcnn" measures Mask R-CNN again in amp-fp16 and fp32: the earlier
# sweeps' rows timed a diverged step (docs/validation-torchvision-maskrcnn.md).
# "residual" profiles, in about seven minutes, the steps the operator model
# still misses uncalibrated (docs/validation-gpus.md): the engine's MLP and
# CNN at batches 16 and 8,192 in fp32 and amp-fp16, whose small batches
# wait on the host (torch.profiler's self CPU time of every operator inside
# the step, against torchhost.py's bare costs), ResNet-50 at batch 256 and
# EfficientNet-B4 at batch 64 in fp32 (convolutions and broadcast kernels
# on the CUDA cores), and the Transformer (base) at small batches in
# amp-fp16 and amp-bf16 twice over, whose step varied 1.7 times between
# earlier runs.
#
# DIR receives one bench log per group, machine.txt (nvidia-smi and the
# versions, before and after), torch-host.csv (engine/torchbench/torchhost.py: the
# host's cost per operator) and torchbench.log (the progress lines). RUN
# prefixes every log's run identifier (default gpu). Each group runs under
# timeout(1) with the seconds below, so that the whole sweep fits a
# ten-minute slot; a group stopped by its timeout still writes the batches
# it finished (the script catches SIGTERM) and its header's
# config.interrupted says where it stopped. PYTHON names the interpreter
# (default python3). Nothing here changes the GPU's settings.
set -u

dir=${1:?usage: scripts/torchbench-gpu.sh DIR [RUN [SWEEP]]}
run=${2:-gpu}
sweep=${3:-first}
case $sweep in
first | tuned | one | rest | profile | gpt | squad | maskrcnn | residual) ;;
*)
	echo "scripts/torchbench-gpu.sh: unknown sweep \"$sweep\" (first, tuned, one, rest, profile, gpt, squad, maskrcnn, residual)" >&2
	exit 2
	;;
esac
py=${PYTHON:-python3}
cd "$(dirname "$0")/.."
mkdir -p "$dir"
log="$dir/torchbench.log"

machine() {
	{
		echo "== $1: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv
		"$py" -c 'import torch, torchvision, platform; print("python", platform.python_version(), "torch", torch.__version__, "torchvision", torchvision.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
		nproc
		grep -m1 'model name' /proc/cpuinfo
	} >>"$dir/machine.txt" 2>&1
}

# bench SECONDS NAME ARGS... runs one group into $dir/NAME.jsonl.
bench() {
	secs=$1
	name=$2
	shift 2
	echo "== $name ($secs s): $*" >>"$log"
	timeout -k 20 "$secs" "$py" engine/torchbench/torchbench.py --device cuda --nproc 1 \
		--warmup 3 --steps 10 --run "$run-$name" --out "$dir/$name.jsonl" "$@" 2>&1 | tee -a "$log"
}

first() {
	bench 60 mlp-cnn --model mlp,cnn --batch 16,32,64,128,256,512,1024,2048,4096,8192 \
		--precision fp32,amp-fp16
	bench 150 resnet50 --model resnet50 --batch 8,16,32,64,128,256,512,1024,2048,4096 \
		--precision fp32,amp-fp16
	bench 90 transformer-base --model transformer-base --seq-len 128 \
		--batch 8,16,32,64,128,256,512,1024,2048,4096 --precision fp32,amp-fp16
	bench 90 efficientnet-b4 --model efficientnet-b4 --batch 4,8,16,32,64,128,256,512,1024 \
		--precision fp32,amp-fp16
	bench 70 resnet50-tf32-bf16 --model resnet50 --batch 8,16,32,64,128,256,512,1024,2048,4096 \
		--precision tf32,amp-bf16
	bench 60 maskrcnn-r50-fpn --model maskrcnn-r50-fpn --batch 1,2,4,8,16,32,64 \
		--precision fp32,amp-fp16
}

tuned() {
	bench 120 resnet50-cl-amp-fp16 --model resnet50 --channels-last \
		--batch 16,32,64,128,256,512,1024,2048,4096 --precision amp-fp16
	bench 90 resnet50-cl-amp-bf16 --model resnet50 --channels-last \
		--batch 16,32,64,128,256,512,1024,2048,4096 --precision amp-bf16
	bench 70 maskrcnn-r50-fpn-amp-fp16 --model maskrcnn-r50-fpn --batch 1,2,4,8,16,32 \
		--precision amp-fp16
	bench 80 efficientnet-b4-cl-amp-fp16 --model efficientnet-b4 --channels-last \
		--batch 16,32,64,128,256,512 --precision amp-fp16
	bench 50 transformer-base-amp-bf16 --model transformer-base --seq-len 128 \
		--batch 8,16,32,64,128,256,512,1024,2048 --precision amp-bf16
	bench 80 resnet50-cl-amp-fp16-compile --model resnet50 --channels-last --compile \
		--batch 256,512 --precision amp-fp16
}

one() {
	bench 110 resnet50 --model resnet50 --batch 8,16,32,64,128,256,512,1024,2048,4096 \
		--precision fp32,amp-fp16
	bench 70 resnet50-cl-amp-fp16 --model resnet50 --channels-last \
		--batch 16,32,64,128,256,512,1024,2048,4096 --precision amp-fp16
	bench 70 transformer-base --model transformer-base --seq-len 128 \
		--batch 8,16,32,64,128,256,512,1024,2048 --precision fp32,amp-fp16
	bench 60 efficientnet-b4 --model efficientnet-b4 --batch 4,8,16,32,64,128,256,512 \
		--precision fp32
	bench 50 efficientnet-b4-cl-amp-fp16 --model efficientnet-b4 --channels-last \
		--batch 16,32,64,128,256,512 --precision amp-fp16
	bench 45 maskrcnn-r50-fpn-amp-fp16 --model maskrcnn-r50-fpn --batch 1,2,4,8,16,32 \
		--precision amp-fp16
	bench 35 cnn --model cnn --batch 16,32,64,128,256,512,1024,2048,4096,8192 --precision fp32
}

rest() {
	bench 50 resnet50-tf32 --model resnet50 --batch 8,16,32,64,128,256,512,1024,2048,4096 \
		--precision tf32
	bench 70 resnet50-cl-amp-bf16 --model resnet50 --channels-last \
		--batch 16,32,64,128,256,512,1024,2048,4096 --precision amp-bf16
	bench 50 transformer-base-amp-bf16 --model transformer-base --seq-len 128 \
		--batch 8,16,32,64,128,256,512,1024,2048 --precision amp-bf16
	bench 35 mlp --model mlp --batch 16,32,64,128,256,512,1024,2048,4096,8192 \
		--precision fp32,amp-fp16
}

profile() {
	bench 60 resnet50-amp-fp16-prof --model resnet50 --batch 256 --precision amp-fp16 --profile
	bench 60 resnet50-cl-amp-fp16-prof --model resnet50 --channels-last --batch 256 \
		--precision amp-fp16 --profile
	bench 60 resnet50-tf32-prof --model resnet50 --batch 256 --precision tf32 --profile
	bench 45 transformer-base-amp-fp16-prof --model transformer-base --seq-len 128 --batch 256 \
		--precision amp-fp16 --profile
	bench 45 gpt3-125m-amp-bf16-prof --model gpt3-125m --seq-len 1024 --batch 8 \
		--precision amp-bf16 --profile
	bench 50 gpt3-350m-amp-bf16-prof --model gpt3-350m --seq-len 1024 --batch 8 \
		--precision amp-bf16 --profile
	bench 50 bert-large-squad-amp-fp16-prof --model bert-large-squad --seq-len 384 --batch 32 \
		--precision amp-fp16 --profile
}

maskrcnn() {
	bench 70 maskrcnn-r50-fpn-amp-fp16 --model maskrcnn-r50-fpn --batch 1,2,4,8,16,32 --precision amp-fp16
	bench 60 maskrcnn-r50-fpn --model maskrcnn-r50-fpn --batch 1,2,4,8 --precision fp32
}

residual() {
	bench 60 mlp-prof --model mlp --batch 16,8192 --precision fp32,amp-fp16 --profile
	bench 60 cnn-prof --model cnn --batch 16,8192 --precision fp32,amp-fp16 --profile
	bench 70 resnet50-fp32-prof --model resnet50 --batch 256 --precision fp32 --profile
	bench 70 efficientnet-b4-fp32-prof --model efficientnet-b4 --batch 64 --precision fp32 --profile
	bench 40 transformer-base-small-prof --model transformer-base --seq-len 128 --batch 8 \
		--precision amp-fp16 --profile
	bench 40 transformer-base-small-1 --model transformer-base --seq-len 128 --batch 8,16,32 \
		--precision amp-fp16,amp-bf16
	bench 40 transformer-base-small-2 --model transformer-base --seq-len 128 --batch 8,16,32 \
		--precision amp-fp16,amp-bf16
}

squad() {
	bench 100 bert-large-squad --model bert-large-squad --seq-len 384 \
		--batch 8,16,32,64,112,128,256 --precision amp-fp16,tf32
	bench 80 bert-base-squad --model bert-base-squad --seq-len 384 \
		--batch 16,32,64,128,172,256,320,512 --precision amp-fp16,tf32
}

gpt() {
	bench 80 gpt3-125m-amp-bf16 --model gpt3-125m --seq-len 2048 --batch 1,2,4,8,16,32,64 \
		--precision amp-bf16
	bench 60 gpt3-125m-tf32 --model gpt3-125m --seq-len 2048 --batch 1,2,4,8,16,32 --precision tf32
	bench 90 gpt3-350m-amp-bf16 --model gpt3-350m --seq-len 2048 --batch 1,2,4,8,16,32,64 \
		--precision amp-bf16
	bench 90 gpt3-760m-amp-bf16 --model gpt3-760m --seq-len 2048 --batch 1,2,4,8,16,32 \
		--precision amp-bf16
	bench 100 gpt3-1.3b-amp-bf16 --model gpt3-1.3b --seq-len 2048 --batch 1,2,4,8,16,32 \
		--precision amp-bf16
}

machine before
nvidia-smi >>"$dir/machine.txt" 2>&1
# The host's own cost per operator (docs/torchbench.md, "The host's cost
# per operator"): a few seconds, the figures that tell this host's
# dispatch from the compute model's default, with the GPU's small
# operator and synchronisation (cuda_op, cuda_sync) that validate --host
# and fit --operators --host take.
timeout -k 5 60 "$py" engine/torchbench/torchhost.py >"$dir/torch-host.csv" 2>>"$log"
$sweep
machine after

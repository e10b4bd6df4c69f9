#!/usr/bin/env python3
"""Split the exposed evaluation passes of NVIDIA's v0.7 Mask R-CNN logs.

Usage: mlperf-eval-split.py GITDIR > testdata/measurements/mlperf-timed/maskrcnn-v0.7-eval.csv

GITDIR is a bare clone of github.com/mlcommons/training_results_v0.7. For every
result_N.txt of NVIDIA/results/dgxa100{,_n2,_n4,_n32}_ngc20.06_pytorch/maskrcnn it
writes the median, over the run's passes, of the exposed pass (eval_start to the
next block_start or epoch_start, or run_stop) and of the "Total inference time"
that maskrcnn_benchmark/engine/inference.py prints between the forward passes and
the preparation of the COCO results; the rest of the pass is that preparation,
the gathering and the hand-over to the background scorer.
"""
import csv
import json
import re
import statistics
import subprocess
import sys

SYSTEMS = [('dgxa100_ngc20.06_pytorch', 8), ('dgxa100_n2_ngc20.06_pytorch', 16),
           ('dgxa100_n4_ngc20.06_pytorch', 32), ('dgxa100_n32_ngc20.06_pytorch', 256)]
INFERENCE = re.compile(r'Total inference time: (\d+):(\d+):([\d.]+) \(')


def git(gitdir, *args):
    """git's output."""
    return subprocess.run(['git', '--git-dir', gitdir, *args], capture_output=True, text=True,
                          errors='replace').stdout


def split(text):
    """(passes, median exposed pass, median inference) of one log."""
    start, exposed, inference = None, [], []
    for line in text.splitlines():
        i = line.find(':::MLLOG ')
        if i >= 0:
            rec = json.loads(line[i + 9:])
            key, t = rec['key'], rec['time_ms'] / 1000
            if key == 'eval_start':
                start = t
            elif key in ('block_start', 'epoch_start', 'run_stop') and start is not None:
                exposed.append(t - start)
                start = None
        m = INFERENCE.search(line)
        if m:
            inference.append(int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3)))
    return len(exposed), statistics.median(exposed), statistics.median(inference)


def main():
    gitdir = sys.argv[1]
    out = csv.writer(sys.stdout, lineterminator='\n')
    out.writerow(['system', 'gpus', 'run', 'passes', 'exposed_median_s', 'inference_median_s'])
    for system, gpus in SYSTEMS:
        base = 'NVIDIA/results/%s/maskrcnn/' % system
        for name in git(gitdir, 'ls-tree', '--name-only', 'HEAD', base).split():
            if not re.search(r'result_\d+\.txt$', name):
                continue
            n, exp, inf = split(git(gitdir, 'show', 'HEAD:' + name))
            out.writerow([system, gpus, name.rsplit('/', 1)[1], n, '%.3f' % exp, '%.3f' % inf])


if __name__ == '__main__':
    main()

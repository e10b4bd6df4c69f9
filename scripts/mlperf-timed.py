#!/usr/bin/env python3
"""Derive testdata/measurements/mlperf-timed/timed-region.csv from MLPerf logs.

Usage: mlperf-timed.py ROUND=GITDIR ... > timed-region.csv

Each GITDIR is a bare clone of github.com/mlcommons/training_results_ROUND;
every <submitter>/results/<system>/<benchmark>/result_0.txt of ResNet-50, SSD,
RetinaNet, Mask R-CNN, BERT, Transformer and GNMT at HEAD is read with
`git show`. The columns are described in the directory's README.
"""
import csv
import json
import re
import statistics
import subprocess
import sys

BENCH = re.compile(r'^([^/]+)/results/([^/]+)/(resnet|ssd|retinanet|maskrcnn|bert|transformer|gnmt)/result_0\.txt$')
COLUMNS = ['round', 'submitter', 'system', 'benchmark', 'nodes', 'global_batch', 'startup_s',
           'first_epoch_excess_s', 'evals', 'eval_exposed_s', 'eval_exposed_median_s', 'run_s']


def git(gitdir, *args):
    """git's output; empty for a file the snapshot lists but does not hold."""
    return subprocess.run(['git', '--git-dir', gitdir, *args], capture_output=True, text=True,
                          errors='replace').stdout


def events(text):
    """The MLLOG records of a log, in order."""
    out = []
    for line in text.splitlines():
        i = line.find(':::MLLOG ')
        if i < 0:
            continue
        try:
            out.append(json.loads(line[i + 9:]))
        except ValueError:
            pass
    return out


def seconds(ms):
    return '%.3f' % (ms / 1000)


def row(rnd, submitter, system, bench, ev):
    """One CSV row, or None for a log without run_start, run_stop or a step."""
    def first(key):
        return next((e for e in ev if e.get('key') == key), None)

    start, stop = first('run_start'), first('run_stop')
    if not start or not stop:
        return None
    t0 = start['time_ms']
    steps = sorted(e['time_ms'] for e in ev if e.get('key') in ('block_start', 'epoch_start'))
    after = [t for t in steps if t >= t0]
    if not after:
        return None
    nodes = re.search(r'_n(\d+)_', system)
    batch = first('global_batch_size')
    epochs = [e['time_ms'] for e in ev if e.get('key') == 'epoch_start']
    lengths = [b - a for a, b in zip(epochs, epochs[1:])]
    excess = ''
    if len(lengths) >= 4:
        excess = seconds(lengths[0] - statistics.median(lengths[1:]))
    # An evaluation is exposed until its eval_stop or until training resumes.
    exposed = []
    ev_start = [e['time_ms'] for e in ev if e.get('key') == 'eval_start']
    ev_stop = [e['time_ms'] for e in ev if e.get('key') == 'eval_stop']
    for a, b in zip(ev_start, ev_stop):
        resume = [t for t in steps if t >= a]
        exposed.append(min(b, resume[0]) - a if resume else b - a)
    return [rnd, submitter, system, bench, nodes.group(1) if nodes else '1',
            batch['value'] if batch else '', seconds(min(after) - t0), excess, len(exposed),
            seconds(sum(exposed)), seconds(statistics.median(exposed)) if exposed else '',
            seconds(stop['time_ms'] - t0)]


def main():
    w = csv.writer(sys.stdout, lineterminator='\n')
    w.writerow(COLUMNS)
    for arg in sys.argv[1:]:
        rnd, gitdir = arg.split('=', 1)
        for path in git(gitdir, 'ls-tree', '-r', 'HEAD', '--name-only').split():
            m = BENCH.match(path)
            if not m:
                continue
            r = row(rnd, *m.groups(), events(git(gitdir, 'show', 'HEAD:' + path)))
            if r:
                w.writerow(r)


if __name__ == '__main__':
    main()

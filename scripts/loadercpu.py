"""loadercpu: the host's time to prepare one EfficientNet-B4 training image
as DeepLearningExamples' PyTorch loader does it (data_backend pytorch,
augmentation autoaugment, interpolation bicubic).

PyTorch/Classification/ConvNets/image_classification/dataloaders.py
(github.com/NVIDIA/DeepLearningExamples at 729963dd),
get_pytorch_train_loader: each DataLoader worker opens the JPEG with PIL
and converts it to RGB, takes RandomResizedCrop(380, bicubic) and
RandomHorizontalFlip, applies AutoaugmentImageNetPolicy (one of the
AutoAugment paper's ImageNet sub-policies, two PIL operations with their
probabilities; Cubuk et al. 2019, arXiv:1805.09501), and fast_collate
copies the image's uint8 pixels into the batch (np.asarray). This script
times the same steps, its own code on torchvision's transforms
(torchvision.transforms.AutoAugment with AutoAugmentPolicy.IMAGENET, the
same paper's ImageNet policy), on one core, on an image it makes: 500x375
pixels of smooth gradients and seeded noise, encoded by PIL at the JPEG
quality whose file is closest below imagenet-1k's 110 kB a sample
(model/profiles/datasets.yaml). It prints the least over ROUNDS rounds of
the mean of N images of each step and of the whole chain, in
milliseconds, as CSV.

    OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE python3 scripts/loadercpu.py > model/testdata/loader-cpu.csv
"""

import io
import os
import platform
import random
import sys
import time

import numpy as np
import PIL
import torch
import torchvision
from PIL import Image
from torchvision import transforms as T

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchhost import cpu_model  # noqa: E402  (the same /proc/cpuinfo reading)

W, H = 500, 375
TARGET = 110_000  # bytes
N, ROUNDS = 100, 9


def make_jpeg():
    rng = np.random.default_rng(1)
    y, x = np.mgrid[0:H, 0:W]
    base = np.stack([x * 255.0 / W, y * 255.0 / H, (x + y) * 127.0 / (W + H)], -1)
    pixels = np.clip(base + rng.normal(0, 40, base.shape), 0, 255).astype(np.uint8)
    best = None
    for q in range(98, 9, -1):
        b = io.BytesIO()
        Image.fromarray(pixels).save(b, "JPEG", quality=q)
        if b.tell() <= TARGET:
            best = (b.getvalue(), q)
            break
    if best is None:
        sys.exit("loadercpu: no JPEG quality gives a file of at most %d bytes" % TARGET)
    return best


def least_mean(fn):
    """The least over ROUNDS of the mean time of N calls of fn, ms."""
    for _ in range(10):
        fn()
    best = float("inf")
    for _ in range(ROUNDS):
        t = time.perf_counter()
        for _ in range(N):
            fn()
        best = min(best, (time.perf_counter() - t) / N)
    return 1e3 * best


def main():
    torch.set_num_threads(1)
    random.seed(0)
    torch.manual_seed(0)
    data, quality = make_jpeg()
    crop = T.RandomResizedCrop(380, interpolation=T.InterpolationMode.BICUBIC)
    flip = T.RandomHorizontalFlip()
    augment = T.AutoAugment(T.AutoAugmentPolicy.IMAGENET)

    def decode():
        return Image.open(io.BytesIO(data)).convert("RGB")

    image = decode()
    cropped = crop(image)

    def chain():
        return np.asarray(augment(flip(crop(decode()))), dtype=np.uint8)

    rows = [
        ("decode", least_mean(decode)),
        ("random_resized_crop", least_mean(lambda: crop(image))),
        ("flip", least_mean(lambda: flip(cropped))),
        ("autoaugment", least_mean(lambda: augment(cropped))),
        ("to_array", least_mean(lambda: np.asarray(cropped, dtype=np.uint8))),
        ("chain", least_mean(chain)),
    ]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print("# host time to prepare one EfficientNet-B4 training image as DeepLearningExamples' PyTorch loader does (scripts/loadercpu.py)")
    name, mhz = cpu_model()
    print("# cpu %s, %.1f MHz, %d logical CPUs, load average %.2f; python %s, Pillow %s, torchvision %s, torch %s, one thread"
          % (name, float(mhz or "nan"), os.cpu_count() or 0, load, platform.python_version(), PIL.__version__, torchvision.__version__, torch.__version__))
    print("# image %dx%d, JPEG quality %d, %d bytes; least over %d rounds of the mean of %d images" % (W, H, quality, len(data), ROUNDS, N))
    print("step,ms")
    for name, ms in rows:
        print("%s,%.3f" % (name, ms))


if __name__ == "__main__":
    main()

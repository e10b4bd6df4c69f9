#!/usr/bin/env python3
"""maskrcnn-diverge.py trains torchvision's Mask R-CNN (ResNet-50-FPN, no
pretrained weights, stem and layer1 frozen, 91 classes) on one synthetic
image with 4 boxes and box masks, as engine/torchbench builds it, on the
CPU, and prints for each step its losses, the RPN's proposals and the RoIs
the heads sample. With the optimizer torchbench first used (momentum SGD at
0.01 from the first step, --schedule first) the losses go to nan after one
update, the RPN proposes nothing and the heads run on the 4 ground-truth
boxes alone; with torchvision's detection reference (SGD 0.02 warmed up from
a thousandth over 1,000 steps, --schedule reference) they keep sampling 512.

Usage: python3 scripts/maskrcnn-diverge.py [--height 800] [--width 1344]
       [--steps 3] [--schedule first|reference] [--seed 1]

One line a step, tab-separated: step, the sum of the losses, proposals,
sampled RoIs and the positive ones among them (the mask head's). Needs torch and torchvision (any 1.13 or 2.x, CPU).
"""
import argparse
import math
import sys


def main(argv):
    p = argparse.ArgumentParser(prog="maskrcnn-diverge")
    p.add_argument("--height", type=int, default=800)
    p.add_argument("--width", type=int, default=1344)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--schedule", choices=["first", "reference"], default="first")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    import torch
    from torchvision.models.detection import MaskRCNN
    from torchvision.models.detection.backbone_utils import resnet_fpn_backbone

    torch.manual_seed(a.seed)
    torch.set_num_threads(1)
    try:
        backbone = resnet_fpn_backbone(backbone_name="resnet50", weights=None, trainable_layers=3)
    except TypeError:
        backbone = resnet_fpn_backbone("resnet50", pretrained=False, trainable_layers=3)
    h, w = a.height, a.width
    model = MaskRCNN(backbone, num_classes=91, min_size=min(h, w), max_size=max(h, w))
    model.train()
    seen = {}
    select = model.roi_heads.select_training_samples

    def counted(proposals, targets):
        seen["proposals"] = sum(int(x.shape[0]) for x in proposals)
        out = select(proposals, targets)
        seen["sampled"] = sum(int(x.shape[0]) for x in out[0])
        seen["positive"] = sum(int((labels > 0).sum()) for labels in out[2])
        return out

    model.roi_heads.select_training_samples = counted
    # torchbench's synthetic image and target (torchbench.py, detection_target).
    n = 4
    img = torch.rand(3, h, w)
    bw, bh = (0.1 + 0.3 * torch.rand(n)) * w, (0.1 + 0.3 * torch.rand(n)) * h
    x1, y1 = torch.rand(n) * (w - bw), torch.rand(n) * (h - bh)
    boxes = torch.stack([x1, y1, x1 + bw, y1 + bh], dim=1)
    masks = torch.zeros(n, h, w, dtype=torch.uint8)
    for i, b in enumerate(boxes.round().long().tolist()):
        masks[i, b[1]:b[3], b[0]:b[2]] = 1
    target = dict(boxes=boxes, labels=torch.randint(1, 91, (n,)), masks=masks)
    params = [q for q in model.parameters() if q.requires_grad]
    sched = None
    if a.schedule == "first":
        opt = torch.optim.SGD(params, lr=0.01, momentum=0.9, weight_decay=1e-4)
    else:
        opt = torch.optim.SGD(params, lr=0.02, momentum=0.9, weight_decay=1e-4)
        sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.001, total_iters=1000)
    for step in range(a.steps):
        loss = sum(model([img], [target]).values())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        v = float(loss)
        print("%d\t%s\t%d\t%d\t%d" % (step, "nan" if math.isnan(v) else "%.4g" % v, seen["proposals"], seen["sampled"],
                                     seen["positive"]))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

package model

import (
	"math"
	"strings"
	"testing"
)

// bookkeeping counts the bookkeeping calls of ops (untracked operators
// other than the convolutions' biases), their kernels and their waits.
func bookkeeping(ops []Op) (calls, kernels, syncs int) {
	for _, o := range ops {
		if !o.Untracked || strings.HasSuffix(o.Name, ".bias") {
			continue
		}
		calls++
		kernels += o.KernelCount()
		if o.Sync {
			syncs++
		}
	}
	return calls, kernels, syncs
}

// TestTorchvisionMaskRCNNCalls checks torchvision's bookkeeping against a
// count by hand of torchvision 0.26's training step (calls, kernels,
// waits).
//
// Per image, 74 calls, 223 kernels, 28 waits:
//   - transform.py and generalized_rcnn.py: normalize's mean and std
//     copies (1+1 kernels, 2 waits), subtraction and division (2), the
//     image's interpolate (1), the masks' float-interpolate-byte (3),
//     resize_boxes' four torch.tensor (4, 4 waits) and its 7 kernels, the
//     copy into the batch (1), degenerate_boxes.any() (2, 1 wait): 12
//     calls, 22 kernels, 7 waits;
//   - rpn.py filter_proposals before NMS: clip (3), remove_small_boxes
//     (6, 1 wait), gathers (3), score threshold (2, 1 wait), gathers (3),
//     keep mask (1), torch.unique (3, 1 wait): 7 calls, 21 kernels, 3
//     waits;
//   - _batched_nms_vanilla per level, five levels: where (2, wait),
//     gathers (2), sort-index_select-kernel-zeros-gather_keep (5),
//     masked_select (2, wait), keep (2): 25 calls, 65 kernels, 10 waits;
//   - after NMS and the anchors' matching: where (2, wait), order (3),
//     top-n (2), anchors' cat (1), box_iou (14), Matcher (7), low-quality
//     matches (3, wait), update (2), gather (2), labels (6), sampler
//     (2 wait + 2 wait + 10): 13 calls, 56 kernels, 4 waits;
//   - roi_heads.py select_training_samples: add_gt (1), box_iou (14),
//     Matcher (7), labels (6), sampler (14, 2 waits), subsample's where
//     (2, wait), gathers (4): 9 calls, 48 kernels, 3 waits;
//   - poolers.py full_like for each of the two poolers (1+1), the mask
//     head's positive where (2, wait) and gathers (2), maskrcnn_loss's
//     labels (1), RoIs (2), masks (1), roi_align (1): 8 calls, 11
//     kernels, 1 wait.
//
// Per step, 57 calls, 240 kernels, 15 waits: the batch's new_full (1);
// per level of five the anchors (8), flatten (2), top-k (3): 15 calls, 65
// kernels; the RPN's concatenations (3), decode (28) and its two
// torch.tensor (1+1, 2 waits), selection (6): 5 calls, 39 kernels; two
// BoxCoder.encode (2 + 1 wait + 25, twice); compute_loss's two where
// (2+2, 2 waits) and gathers (7); per pooler of two its convert (2),
// LevelMapper (10), result (1) and four levels' where (3, wait) and
// scatter (1): 11 calls, 29 kernels, 4 waits each; fastrcnn_loss's cat
// (2), where (2, wait), gathers (2); the mask loss's cat (2) and
// gathers (2).
func TestTorchvisionMaskRCNNCalls(t *testing.T) {
	for _, batch := range []int{1, 2, 8} {
		ops, err := Ops("maskrcnn-r50-fpn", Shape{Batch: batch, Framework: "torch 2.11.0+cu130 torchvision 0.26.0+cu130"})
		if err != nil {
			t.Fatal(err)
		}
		calls, kernels, syncs := bookkeeping(ops)
		if calls != 57+74*batch || kernels != 240+223*batch || syncs != 15+28*batch {
			t.Errorf("batch %d: %d calls, %d kernels, %d waits; want %d, %d, %d",
				batch, calls, kernels, syncs, 57+74*batch, 240+223*batch, 15+28*batch)
		}
	}
}

// TestTorchvisionMaskRCNNLayers checks that torchvision's program differs
// from maskrcnn-benchmark's in its bookkeeping and its 91 classes only:
// torchvision's 44,401,393 parameters (its maskrcnn_resnet50_fpn, and
// torchbench's header) less the frozen stem and layer1 (9,408 +
// 212,992), the class-wide products' FLOPs 91/81 of maskrcnn-benchmark's
// and the other operators' equal but the classifier's loss; far fewer waits (maskrcnn-benchmark's two reads
// per positive RoI, 256 an image); and that a framework without
// "torchvision" keeps maskrcnn-benchmark's program.
func TestTorchvisionMaskRCNNLayers(t *testing.T) {
	classWide := func(name string) bool {
		return strings.HasPrefix(name, "roi_heads.box_predictor.cls_score") || strings.HasPrefix(name, "roi_heads.box_predictor.bbox_pred") ||
			strings.HasPrefix(name, "roi_heads.mask_predictor.mask_fcn_logits")
	}
	sum := func(ops []Op) (wide, rest float64) {
		for _, o := range ops {
			if strings.HasPrefix(o.Name, "roi_heads.loss_classifier") {
				continue // a softmax over the classes and a pick of one
			}
			if classWide(o.Name) {
				wide += o.FLOPs
			} else {
				rest += o.FLOPs
			}
		}
		return wide, rest
	}
	tv, err := Ops("maskrcnn-r50-fpn", Shape{Batch: 4, Framework: "Torchvision"})
	if err != nil {
		t.Fatal(err)
	}
	dle, err := Ops("maskrcnn-r50-fpn", Shape{Batch: 4, Framework: "torch 2.11.0"})
	if err != nil {
		t.Fatal(err)
	}
	if p := Totals(tv).Params; p != 44401393-9408-212992 {
		t.Errorf("torchvision: %d trainable parameters, want 44,178,993", p)
	}
	wt, rt := sum(tv)
	wd, rd := sum(dle)
	if math.Abs(wt/wd-91.0/81) > 1e-9 || rt != rd {
		t.Errorf("FLOPs: class-wide %g and %g (ratio %.6f, want 91/81), the rest %g and %g (want equal)", wt, wd, wt/wd, rt, rd)
	}
	_, _, st := bookkeeping(tv)
	_, _, sd := bookkeeping(dle)
	if st != 15+28*4 || sd < st+256*4 {
		t.Errorf("waits: torchvision %d, maskrcnn-benchmark %d; want %d and at least 1,024 more", st, sd, 15+28*4)
	}
	for _, c := range []struct {
		framework string
		want      detectProgram
	}{
		{"", programDLE}, {"torch", programDLE}, {"pytorch 1.10", programDLE},
		{"tensorflow 2.4", programTF2}, {"torch 2.11.0+cu130 torchvision 0.26.0+cu130", programTorchvision},
	} {
		if got := detectProgramOf(c.framework); got != c.want {
			t.Errorf("detectProgramOf(%q) = %d, want %d", c.framework, got, c.want)
		}
	}
}

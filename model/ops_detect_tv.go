package model

import (
	"strconv"
	"strings"
)

// This file lists the bookkeeping calls of torchvision's Mask R-CNN
// (torchvision.models.detection.maskrcnn_resnet50_fpn and MaskRCNN, as
// engine/torchbench trains it under torchvision 0.26), counted from
// github.com/pytorch/vision: torchvision/models/detection (transform.py,
// generalized_rcnn.py, anchor_utils.py, rpn.py, _utils.py,
// roi_heads.py), torchvision/ops (boxes.py, poolers.py) and
// torchvision/csrc/ops/cuda/nms_kernel.cu, with ops_detect.go's
// conventions: each entry is one call, its kernels, and whether the host
// waits for the device after it (a torch.where or torch.nonzero,
// torch.unique or masked_select sizing its output from the data, a
// Python bool of a CUDA tensor, a pageable copy to the device:
// torch.tensor(…, device=…) and torch.as_tensor of a list). Unlike maskrcnn-benchmark's program
// (ops_detect.go), torchvision batches the RPN's top-k, the box coding
// and the losses over the images, keeps its mask targets on the device
// (project_masks_on_boxes: one roi_align per image, no value read on the
// host) and its NMS's keep mask too (nms_kernel.cu gather_keep_from_mask,
// since pytorch/vision issue 8713): its waits per image are the input
// transform's copies, the suppression's five levels and the matchers'
// and samplers' torch.where, 28 in all against maskrcnn-benchmark's 289
// (two reads per positive RoI among them, 256).

// detectProgram names the program whose bookkeeping a Mask R-CNN step
// lists.
type detectProgram int

const (
	programDLE         detectProgram = iota // DeepLearningExamples' PyTorch (maskrcnn-benchmark)
	programTF2                              // DeepLearningExamples' TensorFlow 2
	programTorchvision                      // torchvision's MaskRCNN
)

// detectProgramOf returns the program a framework names: TensorFlow's for
// a name beginning with "tensorflow", torchvision's for one that names
// torchvision (torchbench's header writes "torch 2.11.0+cu130
// torchvision 0.26.0+cu130"), else DeepLearningExamples' PyTorch one.
func detectProgramOf(framework string) detectProgram {
	f := strings.ToLower(framework)
	switch {
	case strings.HasPrefix(f, "tensorflow"):
		return programTF2
	case strings.Contains(f, "torchvision"):
		return programTorchvision
	}
	return programDLE
}

// tvClasses is torchvision's class count for COCO, background included
// (models/detection/mask_rcnn.py, maskrcnn_resnet50_fpn's num_classes,
// _COCO_CATEGORIES' 91 names), which torchbench's Mask R-CNN keeps: the
// box predictor's class scores and boxes and the mask predictor's
// logits have 91 rows where maskrcnn-benchmark's MLPerf configuration
// has 81.
const tvClasses = 91

// torchvision's training defaults (models/detection/faster_rcnn.py,
// FasterRCNN.__init__, which MaskRCNN takes): rpn_pre_nms_top_n_train
// 2000 boxes per level and image, rpn_post_nms_top_n_train 2000
// proposals per image; the box head's 512 RoIs, a quarter positive at
// most, are maskrcnn-benchmark's (mrcnnBoxRoIs, mrcnnMaskRoIs). tvGTBoxes
// is torchbench's synthetic ground truth per image
// (engine/torchbench/torchbench.py detection_target, n=4), which sizes
// the masks the transform resizes and project_masks_on_boxes reads.
const (
	tvPreNMS    = 2000
	tvProposals = 2000
	tvGTBoxes   = 4
)

// fixed returns a detectCall's size function of v values.
func fixed(v int64) func(*detectShape) int64 { return func(*detectShape) int64 { return v } }

// tvTransform adds GeneralizedRCNNTransform's per-image calls for h×w
// images (transform.py forward) and GeneralizedRCNN.forward's check of
// degenerate boxes: normalize's two torch.as_tensor of the mean and
// standard deviation (copies) and its subtraction and division;
// _resize_image_and_masks's interpolate of the image and of the masks
// (float, interpolate, byte); resize_boxes's four torch.tensor on the
// device (copies), two divisions, four products and a stack;
// batch_images' copy into the padded batch (its new_full once a batch);
// generalized_rcnn.py's degenerate_boxes.any() read as a Python bool.
func tvTransform(b *convNet, h, w int64) {
	img, masks, boxes := fixed(3*h*w), fixed(tvGTBoxes*h*w), fixed(4*tvGTBoxes)
	calls := []detectCall{
		{"normalize.mean", 1, true, fixed(3)},
		{"normalize.std", 1, true, fixed(3)},
		{"normalize", 2, false, img},
		{"resize", 1, false, img},
		{"resize_masks", 3, false, masks},
		{"resize_boxes.new_h", 1, true, fixed(1)},
		{"resize_boxes.old_h", 1, true, fixed(1)},
		{"resize_boxes.new_w", 1, true, fixed(1)},
		{"resize_boxes.old_w", 1, true, fixed(1)},
		{"resize_boxes", 7, false, boxes},
		{"batch", 1, false, img},
		{"degenerate", 2, true, boxes},
	}
	b.bookkeep("transform", nil, []detectCall{{"batch_alloc", 1, false, fixed(b.batch * 3 * h * w)}})
	for img := range b.batch {
		b.bookkeep("transform.image"+strconv.FormatInt(img, 10), nil, calls)
	}
}

// tvLevels returns the anchors of each pyramid level of one image and
// the boxes filter_proposals keeps of them before NMS.
func tvLevels(ps []*fmap) (levels []int64, anchors, kept int64) {
	for _, p := range ps {
		n := mrcnnAnchors * p.h * p.w
		levels = append(levels, n)
		anchors += n
		kept += min(n, tvPreNMS)
	}
	return levels, anchors, kept
}

// tvProposalsOf adds the RPN's anchors, proposal selection, anchor
// matching and sampling and its loss's gathers (rpn.py,
// anchor_utils.py), then the box head's sampling (tvBoxSampling).
func tvProposalsOf(b *convNet, ps []*fmap) {
	levels, anchors, kept := tvLevels(ps)
	all := b.batch * anchors
	for i, n := range levels {
		lv := "rpn.p" + strconv.Itoa(i+2)
		// AnchorGenerator: the level's strides (two fills), grid_anchors'
		// two arange, the meshgrid's two reshapes, stack and sum;
		// concat_box_prediction_layers' two permute-reshapes; the level's
		// index (torch.full) and _get_top_n_idx's topk and offset.
		b.bookkeep(lv, nil, []detectCall{
			{"anchors", 8, false, fixed(n)},
			{"flatten", 2, false, fixed(b.batch * n * 5)},
			{"top_n", 3, false, fixed(b.batch * n)},
		})
	}
	b.bookkeep("rpn", nil, []detectCall{
		// the two concatenations of the head's outputs and of the levels'
		// indices; BoxCoder.decode's concatenation of the anchors and
		// decode_single's 27 kernels (the anchors' sizes and centres 6,
		// the deltas' scaling 4 and clamps 2, the centres 4, the sizes'
		// exp and products 4, the half sizes 2, the corners 4, a stack)
		// with its two torch.tensor(0.5, device=…) (copies);
		// filter_proposals' top-k concatenation, arange, three gathers
		// and sigmoid.
		{"flatten.cat", 3, false, fixed(all * 5)},
		{"decode", 28, false, fixed(4 * all)},
		{"decode.half_w", 1, true, fixed(1)},
		{"decode.half_h", 1, true, fixed(1)},
		{"select", 6, false, fixed(b.batch * kept)},
	})
	for img := range b.batch {
		n := "rpn.image" + strconv.FormatInt(img, 10)
		b.bookkeep(n, nil, tvFilterCalls(kept))
		for i, l := range levels {
			b.bookkeep(n+".nms.p"+strconv.Itoa(i+2), nil, tvNMSLevelCalls(min(l, tvPreNMS)))
		}
		b.bookkeep(n, nil, tvAnchorCalls(anchors, kept))
	}
	b.bookkeep("rpn.loss", nil, tvEncodeCalls(all))
	b.bookkeep("rpn.loss", nil, []detectCall{
		// compute_loss: torch.where of the concatenated positive and
		// negative masks (a concatenation and a nonzero each), the
		// sampled indices' concatenation, the labels' and targets'
		// concatenations and four gathers.
		{"sampled_positive", 2, true, fixed(all)},
		{"sampled_negative", 2, true, fixed(all)},
		{"gather", 7, false, fixed(b.batch * mrcnnRPNSamples * 5)},
	})
	tvBoxSampling(b)
}

// tvFilterCalls lists filter_proposals' calls on one image's kept boxes
// before the per-level suppression: clip_boxes_to_image (two clamps and
// a stack), remove_small_boxes (two differences, two comparisons, an and,
// torch.where) and three gathers, the score threshold's torch.where and
// three gathers, and batched_nms: more than 20,000 coordinates on the
// device take _batched_nms_vanilla (ops/boxes.py), whose keep mask is a
// zeros_like and whose loop runs over torch.unique of the levels.
func tvFilterCalls(kept int64) []detectCall {
	v := fixed(4 * kept)
	return []detectCall{
		{"clip", 3, false, v},
		{"remove_small", 6, true, v},
		{"remove_small.gather", 3, false, v},
		{"score_thresh", 2, true, fixed(kept)},
		{"score_thresh.gather", 3, false, v},
		{"nms.keep_mask", 1, false, fixed(kept)},
		{"nms.unique", 3, true, fixed(kept)},
	}
}

// tvNMSLevelCalls lists _batched_nms_vanilla's calls for one level of n
// boxes: the level's comparison and torch.where, the boxes' and scores'
// gathers, torchvision::nms (nms_kernel.cu: sort, index_select, the
// suppression kernel, a zeros, gather_keep_from_mask and masked_select,
// which waits), and the keep mask's gather and index_put.
func tvNMSLevelCalls(n int64) []detectCall {
	return []detectCall{
		{"where", 2, true, fixed(n)},
		{"gather", 2, false, fixed(5 * n)},
		{"nms", 5, false, fixed(5 * n)},
		{"nms.masked_select", 2, true, fixed(n)},
		{"keep", 2, false, fixed(n)},
	}
}

// tvAnchorCalls lists one image's calls after the suppression and its
// anchors' matching (assign_targets_to_anchors) and sampling: the kept
// indices' torch.where, gather, sort and gather, the post-NMS top-n's two
// gathers; the anchors' concatenation over the levels (AnchorGenerator);
// box_iou (two areas of three kernels, max, min, clamp and difference,
// product, sum, difference, division: 14), the Matcher (max, clone, three
// comparisons and an and, two index_put) with set_low_quality_matches_
// (max, comparison, torch.where) and its gather and index_put, the
// matched boxes' clamp and gather, the labels (comparison, cast, two
// comparisons and index_put); the sampler (tvSamplerCalls).
func tvAnchorCalls(anchors, kept int64) []detectCall {
	a := fixed(anchors)
	calls := []detectCall{
		{"nms.where", 2, true, fixed(kept)},
		{"nms.order", 3, false, fixed(kept)},
		{"post_top_n", 2, false, fixed(5 * tvProposals)},
		{"anchors.cat", 1, false, fixed(4 * anchors)},
		{"match.iou", 14, false, fixed(tvGTBoxes * anchors)},
		{"match", 7, false, a},
		{"match.low_quality", 3, true, fixed(tvGTBoxes * anchors)},
		{"match.update", 2, false, a},
		{"match.gather", 2, false, fixed(4 * anchors)},
		{"labels", 6, false, a},
	}
	return append(calls, tvSamplerCalls(anchors)...)
}

// tvSamplerCalls lists BalancedPositiveNegativeSampler's calls on one
// image's n labels (_utils.py): two torch.where, two randperm of two
// kernels, two gathers, two zeros_like and two index_put.
func tvSamplerCalls(n int64) []detectCall {
	return []detectCall{
		{"sample.positive", 2, true, fixed(n)},
		{"sample.negative", 2, true, fixed(n)},
		{"sample.select", 10, false, fixed(n)},
	}
}

// tvEncodeCalls lists BoxCoder.encode over the batch's n boxes: the two
// concatenations, the weights' torch.as_tensor (a copy) and
// encode_boxes' 25 kernels (twelve for the two boxes' sizes and centres,
// three for each of the four targets, the concatenation).
func tvEncodeCalls(n int64) []detectCall {
	return []detectCall{
		{"encode.cat", 2, false, fixed(8 * n)},
		{"encode.weights", 1, true, fixed(4)},
		{"encode", 25, false, fixed(12 * n)},
	}
}

// tvBoxSampling adds roi_heads.py select_training_samples: per image the
// ground truth added to the proposals (a concatenation),
// assign_targets_to_proposals (box_iou, the Matcher without low-quality
// matches, the clamp, the labels' gather and two comparisons with
// index_put), the sampler, subsample's or and torch.where and the four
// gathers of the sampled RoIs; then BoxCoder.encode over the batch.
func tvBoxSampling(b *convNet) {
	p := int64(tvProposals + tvGTBoxes)
	calls := []detectCall{
		{"add_gt", 1, false, fixed(4 * p)},
		{"iou", 14, false, fixed(tvGTBoxes * p)},
		{"match", 7, false, fixed(p)},
		{"labels", 6, false, fixed(p)},
	}
	calls = append(calls, tvSamplerCalls(p)...)
	calls = append(calls,
		detectCall{"sampled", 2, true, fixed(p)},
		detectCall{"gather", 4, false, fixed(10 * mrcnnBoxRoIs)})
	for img := range b.batch {
		b.bookkeep("roi_heads.box.image"+strconv.FormatInt(img, 10), nil, calls)
	}
	b.bookkeep("roi_heads.box", nil, tvEncodeCalls(b.batch*mrcnnBoxRoIs))
}

// tvPooler adds MultiScaleRoIAlign's calls before its levels (poolers.py):
// _convert_to_roi_format's full_like per image and two concatenations,
// LevelMapper's box areas, square root, log2, offset, floor, clamp and
// cast (10), and the result's zeros; poolerLevels the levels' own.
func tvPooler(b *convNet, name string, rois int64) {
	per := rois / b.batch
	for img := range b.batch {
		b.bookkeep(name+".image"+strconv.FormatInt(img, 10), nil, []detectCall{{"index", 1, false, fixed(per)}})
	}
	b.bookkeep(name, nil, []detectCall{
		{"convert", 2, false, fixed(5 * rois)},
		{"map_levels", 10, false, fixed(rois)},
		{"result", 1, false, fixed(rois)},
	})
	poolerLevels(b, name, rois)
}

// tvBoxLoss adds fastrcnn_loss's bookkeeping (roi_heads.py): the labels'
// and targets' concatenations, torch.where of the positive labels and the
// two gathers of the positive labels and predictions.
func tvBoxLoss(b *convNet) {
	n := b.batch * mrcnnBoxRoIs
	b.bookkeep("roi_heads.box.loss", nil, []detectCall{
		{"cat", 2, false, fixed(5 * n)},
		{"positive", 2, true, fixed(n)},
		{"gather", 2, false, fixed(b.batch * b.maskRoIs * 5)},
	})
}

// tvMaskPositive adds RoIHeads.forward's selection of each image's
// positive RoIs: torch.where of the positive labels and two gathers.
func tvMaskPositive(b *convNet) {
	for img := range b.batch {
		b.bookkeep("roi_heads.mask.image"+strconv.FormatInt(img, 10), nil, []detectCall{
			{"positive", 2, true, fixed(mrcnnBoxRoIs)},
			{"gather", 2, false, fixed(5 * b.maskRoIs)},
		})
	}
}

// tvMaskTargets adds maskrcnn_loss's targets (roi_heads.py): per image the
// labels' gather and project_masks_on_boxes (the matched indices' cast,
// the RoIs' concatenation, the h×w masks cast to float and one roi_align
// of the positive RoIs at 28×28, on the device); then the concatenations
// of labels and targets, arange and the logits' gather over the batch.
func tvMaskTargets(b *convNet, h, w int64) {
	pos := b.maskRoIs
	for img := range b.batch {
		b.bookkeep("roi_heads.mask.image"+strconv.FormatInt(img, 10)+".targets", nil, []detectCall{
			{"labels", 1, false, fixed(pos)},
			{"rois", 2, false, fixed(5 * pos)},
			{"masks", 1, false, fixed(tvGTBoxes * h * w)},
			{"project", 1, false, fixed(pos * 28 * 28)},
		})
	}
	b.bookkeep("roi_heads.mask.loss", nil, []detectCall{
		{"cat", 2, false, fixed(b.batch * pos * 28 * 28)},
		{"gather", 2, false, fixed(b.batch * pos * 28 * 28)},
	})
}

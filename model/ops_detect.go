package model

import (
	"strconv"

	"scaleplan/internal/units"
)

// This file lists the work of Mask R-CNN's training step that is neither a
// layer nor a loss: the RPN's proposal selection, the matching of anchors
// and proposals to the ground truth, the sampling of anchors and RoIs, the
// pooler's assignment of RoIs to pyramid levels and the mask targets. It is
// counted from the implementation NVIDIA's DeepLearningExamples ships
// (github.com/NVIDIA/DeepLearningExamples at 729963dd,
// PyTorch/Segmentation/MaskRCNN/pytorch/maskrcnn_benchmark, based on
// Facebook's maskrcnn-benchmark), file by file below. Each entry is one
// call: its kernels, and whether the host waits for the device after it
// (Op.Sync). A call waits when its result's size depends on the data
// (torch.nonzero, masked_select, indexing with a boolean mask: a count
// read back to size the output), when it reads a value on the host
// (.item(), .tolist(), iterating a CUDA tensor, cudaMemcpy to the host),
// or when it copies a pageable host tensor to the device (torch.tensor(…,
// device=…), .cuda(): PyTorch's aten/src/ATen/native/cuda/Copy.cu copies
// with memcpy_and_sync unless non_blocking). Assignments through a
// boolean mask (labels[mask] = −1) are not counted as waits. The calls are
// untracked (Op.Untracked): they run under torch.no_grad or on integer and
// boolean tensors, outside any nn.Module. DeepLearningExamples'
// TensorFlow 2 program keeps its shapes fixed on the device, runs its
// proposals' suppression on the host (hostNMS, at the end of this file)
// and its anchors and RPN targets outside the step (tfProposals); the
// calls below stand for its device work otherwise.

// detectCall is one bookkeeping call of a detector's step.
type detectCall struct {
	name    string
	kernels int  // CUDA kernels it launches
	sync    bool // the host waits for the device after it
	values  func(d *detectShape) int64
}

// detectShape is what the calls' sizes depend on.
type detectShape struct {
	anchors   int64 // anchors of one image over every level
	level     int64 // anchors of the current level in one image
	preNMS    int64 // boxes one level keeps for NMS (PRE_NMS_TOP_N_TRAIN)
	proposals int64 // proposals one image keeps after NMS over the levels
	rois      int64 // RoIs one image samples for the box head
	positive  int64 // positive RoIs one image gives the mask head
}

// Mask R-CNN's proposal settings in configs/e2e_mask_rcnn_R_50_FPN_1x.yaml
// of DeepLearningExamples: PRE_NMS_TOP_N_TRAIN 2000 boxes per level and
// image, FPN_POST_NMS_TOP_N_TRAIN 12,000 over a batch, which
// scripts/train_benchmark.sh runs at 12 images per GPU (1,000 an image).
const (
	mrcnnPreNMS    = 2000
	mrcnnProposals = 1000
)

func perLevel(d *detectShape) int64   { return d.level }
func preNMS(d *detectShape) int64     { return d.preNMS }
func allAnchors(d *detectShape) int64 { return d.anchors }
func proposals(d *detectShape) int64  { return d.proposals }
func sampled(d *detectShape) int64    { return d.rois }
func positives(d *detectShape) int64  { return d.positive }
func one(*detectShape) int64          { return 1 }

// The anchors (modeling/rpn/anchor_generator.py, recomputed every step):
// per level grid_anchors' two arange, the meshgrid's copies, stack and
// sum; per image and level add_visibility_to's four comparisons and three
// ands.
var (
	anchorLevelCalls      = []detectCall{{"anchors", 6, false, perLevel}}
	anchorImageLevelCalls = []detectCall{{"visibility", 7, false, perLevel}}
)

// RPN proposal selection, per level and image
// (modeling/rpn/inference.py, forward_for_single_feature_map, the CUDA
// path): per level, the sigmoid, top-k, a torch.tensor of the image sizes
// on the device (a copy), the anchors' concatenation, the casts and
// C.GeneratePreNMSUprightBoxes (decode, clip, filter); per image,
// masked_select of the boxes and of the scores, then boxlist_nms
// (structures/boxlist_ops.py; csrc/cuda/nms.cu: sort, index_select, the
// suppression kernel, a cudaMemcpy of its mask to the host, the
// suppression loop on the host, the kept indices copied back and
// gathered) and the BoxList's gather of its boxes and scores.
var (
	rpnLevelCalls = []detectCall{
		{"select", 7, true, perLevel},
	}
	rpnImageLevelCalls = []detectCall{
		{"masked_select_boxes", 2, true, preNMS},
		{"masked_select_scores", 2, true, preNMS},
		{"nms", 3, true, preNMS},
		{"nms.keep", 2, true, preNMS},
		{"nms.gather", 2, false, preNMS},
	}
	// select_over_all_levels and add_gt_proposals (rpn/inference.py):
	// per image the levels' concatenation, the BoxList's boolean indexing
	// of its boxes and scores, the ground truth's scores and concatenation;
	// per batch the scores' concatenation, top-k and mask.
	rpnBatchCalls = []detectCall{
		{"top_n", 4, false, proposals},
	}
	rpnImageCalls = []detectCall{
		{"cat_levels", 2, false, proposals},
		{"select_boxes", 2, true, proposals},
		{"select_scores", 2, true, proposals},
		{"add_gt", 3, false, proposals},
		// rpn/loss.py prepare_targets: the levels' anchors concatenated,
		// _C.box_iou, the Matcher (matcher.py: max, thresholds, and
		// set_low_quality_matches_'s torch.nonzero), the matched boxes'
		// gather, the labels and C.box_encode.
		{"loss.cat_anchors", 2, false, allAnchors},
		{"loss.iou", 1, false, allAnchors},
		{"loss.match", 6, true, allAnchors},
		{"loss.labels", 7, false, allAnchors},
		// balanced_positive_negative_sampler.py: two torch.nonzero, two
		// randperm, two gathers, two masks.
		{"loss.sample_positive", 2, true, allAnchors},
		{"loss.sample_negative", 2, true, allAnchors},
		{"loss.sample_masks", 6, false, allAnchors},
	}
	// rpn/loss.py __call__: the sampled indices' torch.nonzero over the
	// batch (two), the outputs' permutes and concatenations.
	rpnLossBatchCalls = []detectCall{
		{"loss.sampled_positive", 2, true, allAnchors},
		{"loss.sampled_negative", 2, true, allAnchors},
		{"loss.flatten", 14, false, allAnchors},
	}
	// roi_heads/box_head/loss.py subsample: per image _C.box_iou, the
	// Matcher without low-quality matches, the labels, C.box_encode, the
	// sampler's two torch.nonzero and the sampled indices' torch.nonzero,
	// and the BoxList's gather of its fields.
	boxImageCalls = []detectCall{
		{"iou", 1, false, proposals},
		{"match", 5, false, proposals},
		{"labels", 6, false, proposals},
		{"sample_positive", 2, true, proposals},
		{"sample_negative", 2, true, proposals},
		{"sample_masks", 6, false, proposals},
		{"sampled", 2, true, proposals},
		{"gather", 4, false, sampled},
	}
	// box_head/loss.py __call__: torch.nonzero of the positive labels and
	// a torch.tensor([0, 1, 2, 3]) copied to the device.
	boxLossBatchCalls = []detectCall{
		{"positive", 2, true, sampled},
		{"columns", 1, true, one},
	}
	// mask_head/mask_head.py keep_only_positive_boxes: per image a
	// torch.nonzero and the BoxList's gather.
	maskImageCalls = []detectCall{
		{"positive", 2, true, sampled},
		{"gather", 4, false, positives},
	}
	// mask_head/loss.py prepare_targets, per image: _C.box_iou, the
	// Matcher, the matched BoxList's gather, whose SegmentationMask is
	// indexed by iterating the CUDA index tensor (structures/
	// segmentation_mask.py __getitem__: a value read per element, counted
	// in maskTargetRoICalls), the labels, torch.nonzero of the positive,
	// and project_masks_on_boxes: three .cuda() copies and _C.generate_mask_targets
	// (csrc/cuda/generate_mask_targets.cu).
	maskTargetImageCalls = []detectCall{
		{"iou", 1, false, positives},
		{"match", 5, false, positives},
		{"labels", 3, false, positives},
		{"positive", 2, true, positives},
		{"copy_polygons", 1, true, positives},
		{"copy_anchor_index", 1, true, positives},
		{"copy_relative_index", 1, true, positives},
		{"generate", 1, false, positives},
	}
	// Per positive RoI and image: SegmentationMask.__getitem__ iterates
	// the CUDA index tensor, once for the matched targets and once for
	// the positive ones; each element is read on the host (.item()).
	maskTargetRoICalls = []detectCall{
		{"matched_polygon", 1, true, one},
		{"positive_polygon", 1, true, one},
	}
	// mask_head/loss.py __call__: torch.nonzero of the positive labels.
	maskLossBatchCalls = []detectCall{
		{"positive", 2, true, positives},
	}
)

// bookkeep adds calls as untracked forward operators called name.call,
// each moving its values in and out at 4 bytes (boxes, scores and indices
// are fp32 and int32 or wider).
func (b *convNet) bookkeep(name string, d *detectShape, calls []detectCall) {
	for _, c := range calls {
		v := units.Bytes(4 * c.values(d))
		b.fwd = append(b.fwd, Op{Name: name + "." + c.name, Kind: Elementwise, Pass: Forward,
			Read: v, Write: v, Kernels: c.kernels, Sync: c.sync, Untracked: true})
	}
}

// rpnProposals adds the RPN's anchors and proposal selection for the
// pyramid ps (P2–P6, 3 anchors a location), its loss's matching and
// sampling, and the box head's: PyTorch's calls, or where tf is set
// TensorFlow 2's (tfProposals).
func rpnProposals(b *convNet, ps []*fmap, tf bool) {
	d := detectShape{preNMS: mrcnnPreNMS, proposals: mrcnnProposals, rois: mrcnnBoxRoIs, positive: b.maskRoIs}
	for _, p := range ps {
		d.anchors += mrcnnAnchors * p.h * p.w
	}
	if tf {
		tfProposals(b, ps, &d)
		return
	}
	for i, p := range ps {
		d.level = mrcnnAnchors * p.h * p.w
		lv := "rpn.anchor_generator.p" + strconv.Itoa(i+2)
		b.bookkeep(lv, &d, anchorLevelCalls)
		for img := range b.batch {
			b.bookkeep(lv+".image"+strconv.FormatInt(img, 10), &d, anchorImageLevelCalls)
		}
	}
	for i, p := range ps {
		d.level = mrcnnAnchors * p.h * p.w
		lv := "rpn.proposals.p" + strconv.Itoa(i+2)
		b.bookkeep(lv, &d, rpnLevelCalls)
		for img := range b.batch {
			b.bookkeep(lv+".image"+strconv.FormatInt(img, 10), &d, rpnImageLevelCalls)
		}
	}
	b.bookkeep("rpn.proposals", &d, rpnBatchCalls)
	for img := range b.batch {
		b.bookkeep("rpn.image"+strconv.FormatInt(img, 10), &d, rpnImageCalls)
	}
	b.bookkeep("rpn", &d, rpnLossBatchCalls)
	boxSampling(b, &d)
}

// boxSampling adds the box head's matching and sampling of every image.
func boxSampling(b *convNet, d *detectShape) {
	for img := range b.batch {
		b.bookkeep("roi_heads.box.image"+strconv.FormatInt(img, 10), d, boxImageCalls)
	}
}

// TensorFlow 2's proposals (mrcnn_tf2/model/mask_rcnn.py call): its
// anchors are numpy constants of the graph (model/anchors.py) and its
// RPN's targets come from the input pipeline (dataset/dataset_parser.py,
// process_targets_for_training: AnchorLabeler on the CPU), so neither is
// work of the step; the selection over the levels (roi_post_nms_topk),
// the ground truth's boxes added to the proposals (training_ops.py
// proposal_label_op) and the RPN loss's reshapes are PyTorch's
// counterparts without their host reads.
var (
	tfRPNImageCalls = []detectCall{{"cat_levels", 2, false, proposals}, {"add_gt", 3, false, proposals}}
	tfRPNLossCalls  = []detectCall{{"loss.flatten", 14, false, allAnchors}}
)

// tfProposals adds TensorFlow 2's proposals for the pyramid ps: the
// suppression on the host (hostNMS), the selection over the levels, the
// ground truth added, the RPN loss's reshapes and the box head's
// matching and sampling (proposal_label_op, kept as PyTorch's calls).
func tfProposals(b *convNet, ps []*fmap, d *detectShape) {
	hostNMS(b, ps)
	b.bookkeep("rpn.proposals", d, rpnBatchCalls)
	for img := range b.batch {
		b.bookkeep("rpn.image"+strconv.FormatInt(img, 10), d, tfRPNImageCalls)
	}
	b.bookkeep("rpn", d, tfRPNLossCalls)
	boxSampling(b, d)
}

// poolerLevels adds a multi-level RoIAlign's assignment of the RoIs to
// levels (modeling/poolers.py forward: a torch.nonzero per level of the
// 4, and the scatter of its results).
func poolerLevels(b *convNet, name string, rois int64) {
	d := detectShape{rois: rois}
	for l := 2; l <= 5; l++ {
		b.bookkeep(name+".p"+strconv.Itoa(l), &d, []detectCall{{"level", 3, true, sampled}, {"scatter", 1, false, sampled}})
	}
}

// maskPositive adds the mask head's selection of the positive RoIs.
func maskPositive(b *convNet) {
	d := detectShape{rois: mrcnnBoxRoIs, positive: b.maskRoIs}
	for img := range b.batch {
		b.bookkeep("roi_heads.mask.image"+strconv.FormatInt(img, 10), &d, maskImageCalls)
	}
}

// TensorFlow 2's mask targets over the batch (mrcnn_tf2/ops/
// training_ops.py): select_fg_for_masks's top-k of the positive RoIs and
// its gathers, then get_mask_targets's crop and resize of the masks the
// input pipeline cropped to the ground truth's boxes (cropped_gt_masks)
// and its threshold, on the device, with no value read on the host.
var tfMaskTargetCalls = []detectCall{
	{"select_fg", 3, false, positives},
	{"crop_and_resize", 1, false, positives},
	{"threshold", 1, false, positives},
}

// maskTargets adds the mask loss's targets: PyTorch's per image, or where
// tf is set TensorFlow 2's over the batch.
func maskTargets(b *convNet, tf bool) {
	if tf {
		d := detectShape{positive: b.batch * b.maskRoIs}
		b.bookkeep("roi_heads.mask.targets", &d, tfMaskTargetCalls)
		return
	}
	d := detectShape{rois: mrcnnBoxRoIs, positive: b.maskRoIs}
	for img := range b.batch {
		n := "roi_heads.mask.image" + strconv.FormatInt(img, 10) + ".targets"
		b.bookkeep(n, &d, maskTargetImageCalls)
		for r := range d.positive {
			b.bookkeep(n+".roi"+strconv.FormatInt(r, 10), &d, maskTargetRoICalls)
		}
	}
	b.bookkeep("roi_heads.mask.loss", &d, maskLossBatchCalls)
}

// boxLossTargets adds the box loss's selection of the positive RoIs.
func boxLossTargets(b *convNet) {
	b.bookkeep("roi_heads.box.loss", &detectShape{rois: b.batch * mrcnnBoxRoIs}, boxLossBatchCalls)
}

// TensorFlow 2's Mask R-CNN (DeepLearningExamples at 729963dd,
// TensorFlow2/Segmentation/MaskRCNN/mrcnn_tf2/ops/roi_ops.py,
// _propose_rois_gpu) suppresses each pyramid level's proposals with
// tf.image.combined_non_max_suppression under tf.device('CPU:0'), over
// every anchor of the level (no top-k before it), keeping at most
// train_rpn_pre_nms_topn = 2000 boxes (max_output_size_per_class) at an IoU
// of 0.7 (mrcnn_tf2/config.py). TensorFlow's CPU kernel
// (tensorflow/core/kernels/image/non_max_suppression_op.cc, DoNMSPerClass)
// pushes the level's n boxes onto a binary heap, then pops the best and
// compares it with every box selected so far until one overlaps it: when
// n is much larger than k = min(2000, n), nearly every box popped is
// selected, and the k selected cost k(k−1)/2 IoUs (the suppressed ones'
// comparisons are not counted: 1 % more at P2, 4 % at P3, 15 % at P4, in
// scripts/nmscpu.c's run on random scores; fewer at P5 and P6, where the
// heap empties before 2000 are selected). scripts/nmscpu.c times the same
// work on one core of the reference host (a 2.6 GHz AMD EPYC virtual
// machine; its table is model/testdata/nms-cpu.csv, P2's row):
//
//	host(level) = n·nmsPush + k(k−1)/2·nmsIoU
const (
	nmsKeep = 2000
	// nmsPush is the heap's cost per box pushed: 3.030 ms for P2's
	// 209,664 boxes.
	nmsPush units.Seconds = 14.45 * units.Nanosecond
	// nmsIoU is the cost per IoU evaluated, the pops included: 26.553 ms
	// for P2's 2,016,606.
	nmsIoU units.Seconds = 13.17 * units.Nanosecond
)

// nmsHost returns the host's time of TensorFlow's CPU non-maximum
// suppression of n boxes of one image (the formula above).
func nmsHost(n int64) units.Seconds {
	k := min(n, nmsKeep)
	return units.Seconds(n)*nmsPush + units.Seconds(k*(k-1)/2)*nmsIoU
}

// hostNMS adds TensorFlow 2's suppression of the RPN's proposals on the
// host as one operator: each level's boxes and scores (20 bytes an anchor)
// copied to the host, suppressed, and the 1,000 kept copied back. The
// kernel's parallelFor runs the images of the batch on their own threads
// and the graph's five suppressions are independent, which TensorFlow's
// executor runs at once on its inter-op threads: on a host with at least
// as many cores as levels times images, the step waits for the slowest
// level of one image (HostCPU); the levels of every image take HostWork
// of the host's cores, which a host with fewer cores than pieces, or
// devices driven by one process (tf.distribute.MirroredStrategy,
// mrcnn_tf2/runtime/run.py), share (compute.Config.HostCores).
func hostNMS(b *convNet, ps []*fmap) {
	var slowest, work units.Seconds
	var boxes int64
	for _, p := range ps {
		n := mrcnnAnchors * p.h * p.w
		slowest = max(slowest, nmsHost(n))
		work += units.Seconds(b.batch) * nmsHost(n)
		boxes += n
	}
	v := units.Bytes(20 * boxes * b.batch)
	back := units.Bytes(20 * mrcnnProposals * int64(len(ps)) * b.batch)
	b.fwd = append(b.fwd, Op{Name: "rpn.proposals.nms_cpu", Kind: Elementwise, Pass: Forward,
		Read: v, Write: back, Sync: true, Untracked: true, HostCPU: slowest, HostWork: work})
}

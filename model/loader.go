package model

import "scaleplan/internal/units"

// HybridLoadHost is the host's time to load one COCO 2017 training image
// as DeepLearningExamples' PyTorch Mask R-CNN hybrid loader does
// (github.com/NVIDIA/DeepLearningExamples at 729963dd,
// PyTorch/Segmentation/MaskRCNN/pytorch/maskrcnn_benchmark/data/datasets/
// coco.py, HybridDataLoader.__next__; DATALOADER.HYBRID is True by
// default, config/defaults.py): torchvision.io.read_image reads the JPEG
// and decodes it with libjpeg-turbo to 8-bit RGB, and .pin_memory()
// copies the pixels to pinned memory before they go to the device, where
// the resize to 800 × 1333, the flip and the normalisation run
// (data/transforms/transforms.py on a CUDA tensor). The training process
// does it image by image between two steps: engine/trainer.py's
// Prefetcher loads the next batch only when the loop asks for it
// (compute.Config.LoaderHost).
//
// It is scripts/jpegcpu.c's timing of the same work (the read from the
// page cache, the decode and the copy) on one core of the reference host
// (a 2.6 GHz AMD EPYC virtual machine, libjpeg-turbo 2.1.5; its table is
// model/testdata/jpeg-cpu.csv) for an image of COCO's size: 640 × 480 and
// a 160 kB file, train2017's mean (cocodataset.org/#download, "2017 Train
// images [118K/18GB]"). The targets the loader builds from each image's
// annotations are HybridTargets' calls.
const HybridLoadHost units.Seconds = 1.378 * units.Millisecond

// HostCalls counts a piece of host work in the units compute charges:
// operator calls on CPU tensors, CUDA kernels launched from eager
// PyTorch, and synchronisations of a stream (compute.HostCallsTime).
type HostCalls struct {
	// CPU is the operator calls on CPU tensors.
	CPU float64
	// Kernels is the CUDA kernels (copies included) launched.
	Kernels float64
	// Syncs is the waits for a stream's work (a copy from pageable
	// memory, a value read on the host).
	Syncs float64
}

// The hybrid loader's calls for one image beyond the JPEG's read, decode
// and copy (HybridLoadHost), counted from DeepLearningExamples at 729963dd
// (PyTorch/Segmentation/MaskRCNN/pytorch/maskrcnn_benchmark) with
// torchvision's tensor transforms (torchvision/transforms/
// functional_tensor.py: resize casts to float, interpolates, rounds and
// casts back; normalize clones, copies its mean and std to the device,
// checks (std == 0).any() on the host, then sub_ and div_). The fixed
// parts are per image, the others per polygon of the image's instances.
const (
	// data/datasets/coco.py build_target: the boxes' torch.tensor and
	// reshape, BoxList's as_tensor, convert xywh→xyxy (split, two
	// subtractions, two clamps, two additions, cat, as_tensor), the
	// labels' torch.tensor; clip_to_image's four column selections and
	// clamp_, its keep (four selections, two comparisons, an and) and
	// self[keep] (the boxes' and labels' indexing, as_tensor, and the
	// SegmentationMask's nonzero, squeeze and tolist).
	targetBuildCalls = 2 + 1 + 9 + 1 + 8 + 7 + 6
	// Polygons.__init__ with pin_memory: as_tensor and pin_memory.
	targetBuildPolygonCalls = 2
	// transforms.py Resize: BoxList.resize with unequal ratios (COCO's
	// sizes rounded to an 800-pixel shorter side: 640 × 480 to 1066 × 800)
	// splits, multiplies four columns, cats and wraps (as_tensor).
	targetResizeCalls = 1 + 4 + 1 + 1
	// Polygons.resize per polygon: clone, then p[0::2] *= r and p[1::2]
	// *= r, each a slice, an in-place product and a slice assignment.
	targetResizePolygonCalls = 1 + 3 + 3
	// RandomHorizontalFlip (probability 0.5, data/transforms/build.py):
	// BoxList.transpose splits, computes two flipped columns (two
	// subtractions each), cats and wraps; Polygons.transpose per polygon
	// clones, slices, subtracts twice and assigns the slice.
	targetFlipCalls        = 1 + 4 + 1 + 1
	targetFlipPolygonCalls = 1 + 1 + 2 + 1
	flipProbability        = 0.5
	// The image on the device (HybridDataLoader.__next__ and the
	// transforms, on the Prefetcher's loader stream): its copy, resize's
	// four kernels, hflip's one at the flip's probability,
	// convert_image_dtype's cast and division, Normalize's channel
	// reversal (its index copied to the device, the gather), its × 255
	// and F.normalize's seven (clone, two copies, ==, any, sub_, div_);
	// then the target's boxes and labels copied in prefetch
	// (engine/trainer.py) and the labels' empty_like and copy_ again in
	// do_train's target.to(device).
	imageKernels     = 1 + 4 + 2 + 2 + 1 + 7 + 2 + 1
	imageFlipKernels = 1
	// The index's, the mean's and the std's copies from pageable memory
	// and the any()'s read synchronise the loader stream (not the step's
	// stream: the step's kernels are not waited for).
	imageSyncs = 4
)

// cocoInstances is COCO's mean object instances per image: "3.5
// categories and 7.7 instances per image on average" (Lin et al.,
// Microsoft COCO: Common Objects in Context, ECCV 2014, section 5). Each
// is taken as one polygon, the least a polygon annotation has (an
// occluded object has several: cocodataset.org/#format-data), so the
// per-polygon calls are a lower bound.
const cocoInstances = 7.7

// HybridTargetCalls returns the hybrid loader's calls for one image of
// polygons polygons beyond the JPEG's decode: the target built, resized
// and flipped on the host and the image transformed on the device.
func HybridTargetCalls(polygons float64) HostCalls {
	fixed := targetBuildCalls + targetResizeCalls + flipProbability*targetFlipCalls
	per := targetBuildPolygonCalls + targetResizePolygonCalls + flipProbability*targetFlipPolygonCalls
	return HostCalls{
		CPU:     fixed + polygons*per,
		Kernels: imageKernels + flipProbability*imageFlipKernels,
		Syncs:   imageSyncs,
	}
}

// HybridTargets is HybridTargetCalls for an image of COCO's mean
// instances, one polygon each.
var HybridTargets = HybridTargetCalls(cocoInstances)

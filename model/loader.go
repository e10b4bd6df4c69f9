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
// images [118K/18GB]"). Not counted: the targets the loader builds in
// Python from each image's annotations (a BoxList and a tensor per
// polygon, pinned, resized and flipped polygon by polygon:
// structures/segmentation_mask.py), which have no measured cost here.
const HybridLoadHost units.Seconds = 1.378 * units.Millisecond

/*
 * nmscpu: the host's time of the RPN's non-maximum suppression that
 * DeepLearningExamples' TensorFlow 2 Mask R-CNN places on the CPU.
 *
 * TensorFlow2/Segmentation/MaskRCNN/mrcnn_tf2/ops/roi_ops.py
 * (github.com/NVIDIA/DeepLearningExamples at 729963dd),
 * _propose_rois_gpu, runs tf.image.combined_non_max_suppression under
 * tf.device('CPU:0') on every anchor of each pyramid level (P2-P6 of an
 * 832x1344 image, 3 anchors a location, anchor_scale 8, aspect ratios
 * (1, 1), (1.4, 0.7), (0.7, 1.4): mrcnn_tf2/config.py and
 * model/anchors.py), with max_output_size_per_class 2000 (train_rpn_
 * pre_nms_topn), IoU threshold 0.7 and score threshold 0. TensorFlow's CPU
 * kernel (tensorflow/core/kernels/image/non_max_suppression_op.cc,
 * DoNMSPerClass) pushes every box scoring above the threshold onto a
 * binary heap, then pops the best and compares it with the boxes selected
 * so far, newest first, until one overlaps it by more than the threshold,
 * selecting it when none does, until it has selected 2000 or the heap is
 * empty. This program does the same work (its own code) on one image's
 * anchors with seeded uniform scores (the RPN head is newly initialised
 * in DeepLearningExamples' training benchmark) and prints, per level,
 * the boxes, the boxes selected and popped, the IoUs evaluated, and the
 * least of --rounds timings of the heap's construction and of the
 * selection, in milliseconds; and the two costs model/ops_detect.go
 * takes from the P2 row: nanoseconds per box pushed and per IoU.
 *
 *   gcc -O2 -o /tmp/nmscpu scripts/nmscpu.c -lm && /tmp/nmscpu > table.csv
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KEEP 2000    /* train_rpn_pre_nms_topn */
#define IOU_MAX 0.7f /* train_rpn_nms_threshold */
#define ROUNDS 9

struct item {
	int box;
	float score;
};

struct level {
	int boxes, selected, popped;
	long ious;
	double heap_ms, select_ms;
};

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* overlap returns the intersection over union of boxes a and b, each
 * y0, x0, y1, x1 in any corner order. */
static float overlap(const float *a, const float *b)
{
	float ay0 = fminf(a[0], a[2]), ay1 = fmaxf(a[0], a[2]);
	float ax0 = fminf(a[1], a[3]), ax1 = fmaxf(a[1], a[3]);
	float by0 = fminf(b[0], b[2]), by1 = fmaxf(b[0], b[2]);
	float bx0 = fminf(b[1], b[3]), bx1 = fmaxf(b[1], b[3]);
	float area_a = (ay1 - ay0) * (ax1 - ax0);
	float area_b = (by1 - by0) * (bx1 - bx0);
	if (area_a <= 0 || area_b <= 0)
		return 0;
	float h = fmaxf(fminf(ay1, by1) - fmaxf(ay0, by0), 0);
	float w = fmaxf(fminf(ax1, bx1) - fmaxf(ax0, bx0), 0);
	float inter = h * w;
	return inter / (area_a + area_b - inter);
}

static void sift_up(struct item *heap, int k)
{
	while (k > 0) {
		int up = (k - 1) / 2;
		if (heap[up].score >= heap[k].score)
			break;
		struct item t = heap[up];
		heap[up] = heap[k];
		heap[k] = t;
		k = up;
	}
}

static struct item take(struct item *heap, int *n)
{
	struct item top = heap[0];
	heap[0] = heap[--*n];
	for (int k = 0;;) {
		int l = 2 * k + 1, best = k;
		if (l < *n && heap[l].score > heap[best].score)
			best = l;
		if (l + 1 < *n && heap[l + 1].score > heap[best].score)
			best = l + 1;
		if (best == k)
			break;
		struct item t = heap[best];
		heap[best] = heap[k];
		heap[k] = t;
		k = best;
	}
	return top;
}

/* anchors fills boxes with the anchors of a level of stride s over an
 * h x w image, 3 a location, and scores with seeded uniform scores. */
static int anchors(float *boxes, float *scores, int h, int w, int s, unsigned *seed)
{
	static const float aspect[3][2] = {{1, 1}, {1.4f, 0.7f}, {0.7f, 1.4f}};
	int n = 0;
	float size = 8.0f * s; /* anchor_scale 8 */
	for (int y = s / 2; y < h; y += s)
		for (int x = s / 2; x < w; x += s)
			for (int a = 0; a < 3; a++) {
				float hx = size * aspect[a][0] / 2, hy = size * aspect[a][1] / 2;
				float *b = boxes + 4 * n;
				b[0] = y - hy, b[1] = x - hx, b[2] = y + hy, b[3] = x + hx;
				*seed = *seed * 1103515245u + 12345u;
				scores[n++] = ((*seed >> 8) & 0xffffff) / 16777216.0f + 1e-7f;
			}
	return n;
}

static void run(struct level *lv, const float *boxes, const float *scores, int n,
		struct item *heap, int *selected)
{
	lv->boxes = n;
	lv->heap_ms = lv->select_ms = 1e30;
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now();
		int size = 0;
		for (int i = 0; i < n; i++)
			if (scores[i] > 0) {
				heap[size] = (struct item){i, scores[i]};
				sift_up(heap, size++);
			}
		double t1 = now();
		int kept = 0, popped = 0;
		long ious = 0;
		while (kept < KEEP && size > 0) {
			struct item c = take(heap, &size);
			int keep = 1;
			popped++;
			for (int j = kept - 1; j >= 0; j--) {
				ious++;
				if (overlap(boxes + 4 * c.box, boxes + 4 * selected[j]) > IOU_MAX) {
					keep = 0;
					break;
				}
			}
			if (keep)
				selected[kept++] = c.box;
		}
		double t2 = now();
		lv->heap_ms = fmin(lv->heap_ms, 1e3 * (t1 - t0));
		lv->select_ms = fmin(lv->select_ms, 1e3 * (t2 - t1));
		lv->selected = kept;
		lv->popped = popped;
		lv->ious = ious;
	}
}

int main(void)
{
	const int h = 832, w = 1344; /* image_size */
	int most = (h / 4) * (w / 4) * 3;
	float *boxes = malloc(sizeof(float) * 4 * most), *scores = malloc(sizeof(float) * most);
	struct item *heap = malloc(sizeof(struct item) * most);
	int *selected = malloc(sizeof(int) * KEEP);
	struct level lv[5];
	unsigned seed = 1;
	if (!boxes || !scores || !heap || !selected)
		return 1;
	for (int l = 0; l < 5; l++) {
		int n = anchors(boxes, scores, h, w, 4 << l, &seed);
		run(&lv[l], boxes, scores, n, heap, selected);
	}
	double load[1] = {0};
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &load[0]) != 1)
			load[0] = 0;
		fclose(f);
	}
	printf("# host time of TensorFlow's CPU non-maximum suppression per level of one 832x1344 image (scripts/nmscpu.c)\n");
	printf("# gcc -O2, %ld logical CPUs, load average %.2f, least of %d rounds\n", sysconf(_SC_NPROCESSORS_ONLN), load[0], ROUNDS);
	printf("level,boxes,selected,popped,ious,heap_ms,select_ms\n");
	for (int l = 0; l < 5; l++)
		printf("p%d,%d,%d,%d,%ld,%.3f,%.3f\n", l + 2, lv[l].boxes, lv[l].selected, lv[l].popped,
		       lv[l].ious, lv[l].heap_ms, lv[l].select_ms);
	printf("# push_ns,%.2f\n# iou_ns,%.2f\n", 1e6 * lv[0].heap_ms / lv[0].boxes,
	       1e6 * lv[0].select_ms / lv[0].ious);
	return 0;
}

/*
 * tf2parse: the host's time of the parse of one COCO training image by
 * DeepLearningExamples' TensorFlow 2 Mask R-CNN input pipeline, stage by
 * stage, on one thread.
 *
 * TensorFlow2/Segmentation/MaskRCNN/mrcnn_tf2 (github.com/NVIDIA/
 * DeepLearningExamples at 729963dd): dataset/dataset.py:57-66 maps
 * dataset/dataset_parser.py's dataset_parser over the records with
 * num_parallel_calls=AUTOTUNE, and its options (dataset.py:126-129) run
 * each call's operators on one thread (max_intra_op_parallelism = 1). One
 * call, for a 640x480 image (COCO's usual size: Lin et al. 2014, arXiv:
 * 1405.0312) with P instances (object_detection/tf_example_decoder.py,
 * ops/preprocess_ops.py, model/anchors.py; config.py: image_size 832x1344,
 * gt_mask_size 112, levels 2-6, aspect ratios (1, 1), (1.4, 0.7),
 * (0.7, 1.4), anchor_scale 8, rpn IoU 0.7 and 0.3, 256 anchors sampled):
 *
 *   the JPEG's decode (not here: scripts/jpegcpu.c's decode_ms);
 *   per instance, its PNG mask's decode (zlib inflate of a 640x480 8-bit
 *     mask written as PIL does, compress level 6, filter "none" on every
 *     row: PIL's adaptive filters are not redone) and cast to float32;
 *   convert_image_dtype (cast, x 1/255) and normalize_image (- mean, / std);
 *   the random flip (probability 0.5) of the image and of every mask;
 *   resize_and_pad: the image's bilinear resize (half-pixel centres) to
 *     832x1109 and its pad to 832x1344; each mask's nearest-neighbour
 *     resize and pad to the same;
 *   crop_gt_masks: each mask's bilinear crop_and_resize to 112x112 and its
 *     pad to 116x116;
 *   AnchorLabeler.label_anchors over 279,279 anchors: the IoU of every
 *     anchor with every box and ArgMaxMatcher's matching (per anchor the
 *     best box, thresholds, per box its best anchor forced); the balanced
 *     sampler (the negatives' indices shuffled, 256 less the positives
 *     kept); FasterRcnnBoxCoder's encoding of every anchor against its
 *     box and the labels' unpacking per level.
 *
 * The stages are written here (our own code) as TensorFlow's CPU kernels
 * compute them, each a full pass over its tensors, without TensorFlow's
 * per-operator dispatch and allocations, and without the record's
 * tf.Example parse (a lower bound of its time). Boxes (8, of 40 to 340 by
 * 40 to 440 pixels) and their elliptic masks are made from a seeded
 * generator. It prints the least of ROUNDS timings of each stage in
 * milliseconds: per image, or per instance (one mask a round, the rounds
 * going through the 8; the anchor labeller's IoU and matching timed with
 * the 8 boxes and divided by 8).
 *
 *   gcc -O2 -o /tmp/tf2parse scripts/tf2parse.c -lz -lm && /tmp/tf2parse > table.csv
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define W 640
#define H 480
#define OH 832  /* image_size[0] */
#define OW 1344 /* image_size[1] */
#define SW 1109 /* int(640 * 832/480): resize_and_pad's scaled width */
#define MS 112  /* gt_mask_size */
#define NB 8    /* boxes of the anchor labeller's run */
#define ROUNDS 9

/* rnd is a 64-bit linear congruential generator (Knuth's MMIX
 * constants), its high 32 bits returned. */
static unsigned long long state = 1;

static unsigned rnd(void)
{
	state = state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)(state >> 32);
}

static double uniform(void) { return rnd() / 4294967296.0; }

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}

static volatile float sink;

/* boxes y0, x0, y1, x1 in the 832x1109 resized image */
static float gt[NB][4];
static float *anchors; /* 279,279 x 4 */
static int nanchors;

static void make_anchors(void)
{
	static const double ar[3][2] = {{1, 1}, {1.4, 0.7}, {0.7, 1.4}};
	int n = 0;
	for (int l = 2; l <= 6; l++)
		n += 3 * (OH >> l) * (OW >> l);
	anchors = malloc(sizeof(float) * 4 * n);
	nanchors = 0;
	for (int l = 2; l <= 6; l++) {
		double s = 1 << l;
		for (int y = 0; y < (OH >> l); y++)
			for (int x = 0; x < (OW >> l); x++)
				for (int a = 0; a < 3; a++) {
					double hy = 8 * s * ar[a][1] / 2, hx = 8 * s * ar[a][0] / 2;
					double cy = s / 2 + y * s, cx = s / 2 + x * s;
					float *b = anchors + 4 * nanchors++;
					b[0] = cy - hy, b[1] = cx - hx, b[2] = cy + hy, b[3] = cx + hx;
				}
	}
}

static void make_boxes(void)
{
	for (int i = 0; i < NB; i++) {
		double h = 40 + 300 * uniform(), w = 40 + 400 * uniform();
		double y = (OH - h) * uniform(), x = (SW - w) * uniform();
		gt[i][0] = y, gt[i][1] = x, gt[i][2] = y + h, gt[i][3] = x + w;
	}
}

/* png_mask writes box i's ellipse as a 640x480 PNG-like zlib stream (a
 * filter byte of 0 before each row) and returns its length. */
static unsigned long png_mask(int i, unsigned char *out, unsigned long cap)
{
	static unsigned char raw[H * (W + 1)];
	double k = (double)H / OH;
	double cy = k * (gt[i][0] + gt[i][2]) / 2, cx = k * (gt[i][1] + gt[i][3]) / 2;
	double ry = k * (gt[i][2] - gt[i][0]) / 2, rx = k * (gt[i][3] - gt[i][1]) / 2;
	for (int y = 0; y < H; y++) {
		raw[y * (W + 1)] = 0;
		for (int x = 0; x < W; x++) {
			double dy = (y - cy) / ry, dx = (x - cx) / rx;
			raw[y * (W + 1) + 1 + x] = dy * dy + dx * dx <= 1;
		}
	}
	if (compress2(out, &cap, raw, sizeof raw, 6) != Z_OK) {
		fprintf(stderr, "tf2parse: compress2 failed\n");
		exit(1);
	}
	return cap;
}

static void bilinear(const float *in, int ih, int iw, int c, float *out, int oh, int ow)
{
	static float xl[OW], xw[OW];
	static int x0[OW], x1[OW];
	float sy = (float)ih / oh, sx = (float)iw / ow;
	for (int x = 0; x < ow; x++) {
		float f = (x + 0.5f) * sx - 0.5f, fl = floorf(f);
		x0[x] = fl < 0 ? 0 : (int)fl;
		x1[x] = (int)fl + 1 > iw - 1 ? iw - 1 : (int)fl + 1;
		xw[x] = f - fl, xl[x] = 1 - xw[x];
	}
	for (int y = 0; y < oh; y++) {
		float f = (y + 0.5f) * sy - 0.5f, fl = floorf(f), wy = f - fl;
		int y0 = fl < 0 ? 0 : (int)fl, y1 = (int)fl + 1 > ih - 1 ? ih - 1 : (int)fl + 1;
		const float *r0 = in + (size_t)y0 * iw * c, *r1 = in + (size_t)y1 * iw * c;
		float *o = out + (size_t)y * ow * c;
		for (int x = 0; x < ow; x++)
			for (int k = 0; k < c; k++) {
				float top = r0[x0[x] * c + k] * xl[x] + r0[x1[x] * c + k] * xw[x];
				float bot = r1[x0[x] * c + k] * xl[x] + r1[x1[x] * c + k] * xw[x];
				o[x * c + k] = top + (bot - top) * wy;
			}
	}
}

static void nearest(const float *in, int ih, int iw, float *out, int oh, int ow)
{
	static int xs[OW];
	float sy = (float)ih / oh, sx = (float)iw / ow;
	for (int x = 0; x < ow; x++) {
		int v = (int)floorf((x + 0.5f) * sx);
		xs[x] = v > iw - 1 ? iw - 1 : v;
	}
	for (int y = 0; y < oh; y++) {
		int v = (int)floorf((y + 0.5f) * sy);
		const float *r = in + (size_t)(v > ih - 1 ? ih - 1 : v) * iw;
		for (int x = 0; x < ow; x++)
			out[(size_t)y * ow + x] = r[xs[x]];
	}
}

/* pad copies an h x w x c tensor into the top left of an OH x OW x c one of
 * zeros, as tf.image.pad_to_bounding_box's Pad writes its whole output. */
static void pad(const float *in, int h, int w, int c, float *out)
{
	for (int y = 0; y < OH; y++) {
		float *o = out + (size_t)y * OW * c;
		if (y < h) {
			memcpy(o, in + (size_t)y * w * c, sizeof(float) * w * c);
			memset(o + w * c, 0, sizeof(float) * (OW - w) * c);
		} else {
			memset(o, 0, sizeof(float) * OW * c);
		}
	}
}

static void flip(float *t, int h, int w, int c)
{
	for (int y = 0; y < h; y++) {
		float *r = t + (size_t)y * w * c;
		for (int a = 0, b = w - 1; a < b; a++, b--)
			for (int k = 0; k < c; k++) {
				float v = r[a * c + k];
				r[a * c + k] = r[b * c + k], r[b * c + k] = v;
			}
	}
}

/* crop samples box i of the padded mask bilinearly at MS x MS and pads
 * the crop by 2 on each side. */
static void crop(const float *m, int i, float *out)
{
	const float *b = gt[i];
	int S = MS + 4;
	memset(out, 0, sizeof(float) * S * S);
	for (int y = 0; y < MS; y++) {
		float fy = b[0] + y * (b[2] - b[0]) / (MS - 1), ly = floorf(fy), wy = fy - ly;
		int y0 = (int)ly, y1 = y0 + 1 < OH ? y0 + 1 : y0;
		for (int x = 0; x < MS; x++) {
			float fx = b[1] + x * (b[3] - b[1]) / (MS - 1), lx = floorf(fx), wx = fx - lx;
			int x0 = (int)lx, x1 = x0 + 1 < OW ? x0 + 1 : x0;
			float t = m[y0 * OW + x0] + (m[y0 * OW + x1] - m[y0 * OW + x0]) * wx;
			float u = m[y1 * OW + x0] + (m[y1 * OW + x1] - m[y1 * OW + x0]) * wx;
			out[(y + 2) * S + x + 2] = t + (u - t) * wy;
		}
	}
}

/* match computes the IoU of every anchor with each of nb boxes and
 * ArgMaxMatcher's result: the best box of each anchor at IoU 0.7 or more,
 * -1 below 0.3, -2 between; then each box's best anchor forced to it. */
static void match(int nb, float *iou, int *res)
{
	for (int a = 0; a < nanchors; a++) {
		const float *p = anchors + 4 * a;
		float pa = (p[2] - p[0]) * (p[3] - p[1]);
		for (int j = 0; j < nb; j++) {
			float ih = fminf(p[2], gt[j][2]) - fmaxf(p[0], gt[j][0]);
			float iw = fminf(p[3], gt[j][3]) - fmaxf(p[1], gt[j][1]);
			float in = ih > 0 && iw > 0 ? ih * iw : 0;
			float ga = (gt[j][2] - gt[j][0]) * (gt[j][3] - gt[j][1]);
			iou[(size_t)j * nanchors + a] = in / (pa + ga - in);
		}
	}
	for (int a = 0; a < nanchors; a++) {
		int best = 0;
		for (int j = 1; j < nb; j++)
			if (iou[(size_t)j * nanchors + a] > iou[(size_t)best * nanchors + a])
				best = j;
		float v = iou[(size_t)best * nanchors + a];
		res[a] = v >= 0.7f ? best : v < 0.3f ? -1 : -2;
	}
	for (int j = 0; j < nb; j++) {
		int best = 0;
		for (int a = 1; a < nanchors; a++)
			if (iou[(size_t)j * nanchors + a] > iou[(size_t)j * nanchors + best])
				best = a;
		res[best] = j;
	}
}

/* sample keeps up to 128 positives and 256 less those of the negatives,
 * each set's indices gathered and shuffled, and writes the score
 * targets: 1 positive, 0 negative, -1 ignored. */
static void sample(const int *res, int *idx, int *score)
{
	int np = 0, nn = 0;
	for (int a = 0; a < nanchors; a++)
		score[a] = -1;
	for (int a = 0; a < nanchors; a++)
		if (res[a] >= 0)
			idx[np++] = a;
	for (int i = np - 1; i > 0; i--) {
		int k = rnd() % (i + 1), v = idx[i];
		idx[i] = idx[k], idx[k] = v;
	}
	int kp = np < 128 ? np : 128;
	for (int i = 0; i < kp; i++)
		score[idx[i]] = 1;
	for (int a = 0; a < nanchors; a++)
		if (res[a] == -1)
			idx[nn++] = a;
	for (int i = nn - 1; i > 0; i--) {
		int k = rnd() % (i + 1), v = idx[i];
		idx[i] = idx[k], idx[k] = v;
	}
	for (int i = 0; i < 256 - kp && i < nn; i++)
		score[idx[i]] = 0;
}

/* encode writes FasterRcnnBoxCoder's targets of every anchor against its
 * matched box (zeros when unmatched), then copies them level by level as
 * unpack_labels' gathers do. */
static void encode(const int *res, float *t, float *levels)
{
	for (int a = 0; a < nanchors; a++) {
		const float *p = anchors + 4 * a, *g = gt[res[a] >= 0 ? res[a] : 0];
		float ha = p[2] - p[0], wa = p[3] - p[1], ya = p[0] + ha / 2, xa = p[1] + wa / 2;
		float h = g[2] - g[0], w = g[3] - g[1], y = g[0] + h / 2, x = g[1] + w / 2;
		float m = res[a] >= 0;
		t[4 * a + 0] = m * (y - ya) / ha;
		t[4 * a + 1] = m * (x - xa) / wa;
		t[4 * a + 2] = m * logf(h / ha);
		t[4 * a + 3] = m * logf(w / wa);
	}
	memcpy(levels, t, sizeof(float) * 4 * nanchors);
}

enum { IMG_FLOAT, NORMALIZE, FLIP_IMAGE, RESIZE_IMAGE, PAD_IMAGE, MASK_DECODE, MASK_FLOAT,
       FLIP_MASK, RESIZE_MASK, PAD_MASK, CROP_MASK, IOU_MATCH, SAMPLE, ENCODE, NSTAGE };

static const char *names[NSTAGE] = {"image_to_float", "normalize", "flip_image", "resize_image",
	"pad_image", "mask_png_decode", "mask_to_float", "flip_mask", "resize_mask", "pad_mask",
	"crop_mask", "anchor_iou_match", "anchor_sample", "anchor_encode"};
static const int instance[NSTAGE] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0};

int main(void)
{
	static unsigned char jpeg[H * W * 3], png[NB][1 << 20], maskb[H * W + H];
	static const float mean[3] = {0.485f, 0.456f, 0.406f}, sd[3] = {0.229f, 0.224f, 0.225f};
	unsigned long plen[NB];
	double best[NSTAGE];
	make_anchors();
	make_boxes();
	for (int i = 0; i < NB; i++)
		plen[i] = png_mask(i, png[i], sizeof png[i]);
	for (size_t i = 0; i < sizeof jpeg; i++)
		jpeg[i] = rnd() & 255;
	float *img = malloc(sizeof(float) * H * W * 3), *rs = malloc(sizeof(float) * OH * SW * 3);
	float *pd = malloc(sizeof(float) * OH * OW * 3), *m = malloc(sizeof(float) * H * W);
	float *mr = malloc(sizeof(float) * OH * SW), *mp = malloc(sizeof(float) * OH * OW);
	float *cr = malloc(sizeof(float) * (MS + 4) * (MS + 4));
	float *iou = malloc(sizeof(float) * NB * nanchors), *t = malloc(sizeof(float) * 4 * nanchors);
	float *lv = malloc(sizeof(float) * 4 * nanchors);
	int *res = malloc(sizeof(int) * nanchors), *idx = malloc(sizeof(int) * nanchors);
	int *score = malloc(sizeof(int) * nanchors);
	for (int s = 0; s < NSTAGE; s++)
		best[s] = 1e9;
	for (int r = 0; r < ROUNDS; r++) {
		double c[NSTAGE + 1];
		int s = 0;
		c[s++] = now();
		for (int i = 0; i < H * W * 3; i++)
			img[i] = jpeg[i];
		for (int i = 0; i < H * W * 3; i++)
			img[i] *= 1.0f / 255;
		c[s++] = now();
		for (int i = 0; i < H * W * 3; i++)
			img[i] -= mean[i % 3];
		for (int i = 0; i < H * W * 3; i++)
			img[i] /= sd[i % 3];
		c[s++] = now();
		flip(img, H, W, 3);
		c[s++] = now();
		bilinear(img, H, W, 3, rs, OH, SW);
		c[s++] = now();
		pad(rs, OH, SW, 3, pd);
		c[s++] = now();
		/* the per-instance stages, one mask each, timed separately */
		uLongf n = sizeof maskb;
		if (uncompress(maskb, &n, png[r % NB], plen[r % NB]) != Z_OK || n != sizeof maskb) {
			fprintf(stderr, "tf2parse: uncompress failed\n");
			return 1;
		}
		c[s++] = now();
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++)
				m[y * W + x] = maskb[y * (W + 1) + 1 + x];
		c[s++] = now();
		flip(m, H, W, 1);
		c[s++] = now();
		nearest(m, H, W, mr, OH, SW);
		c[s++] = now();
		pad(mr, OH, SW, 1, mp);
		c[s++] = now();
		crop(mp, r % NB, cr);
		c[s++] = now();
		match(NB, iou, res);
		c[s++] = now();
		sample(res, idx, score);
		c[s++] = now();
		encode(res, t, lv);
		c[s++] = now();
		sink = pd[12345] + cr[5000] + lv[777] + score[4242] + mp[999];
		for (int k = 0; k < NSTAGE; k++) {
			double ms = 1e3 * (c[k + 1] - c[k]) / (k == IOU_MATCH ? NB : 1);
			if (ms < best[k])
				best[k] = ms;
		}
	}
	double load[3] = {0};
	if (getloadavg(load, 3) < 1)
		load[0] = -1;
	printf("# host time of DeepLearningExamples' TensorFlow 2 Mask R-CNN parse of one 640x480 image, stage by stage, one thread (scripts/tf2parse.c)\n");
	printf("# gcc -O2, zlib %s, %ld logical CPUs, load average %.2f, least of %d rounds\n", zlibVersion(),
	       sysconf(_SC_NPROCESSORS_ONLN), load[0], ROUNDS);
	printf("stage,per,ms\n");
	for (int k = 0; k < NSTAGE; k++)
		printf("%s,%s,%.4f\n", names[k], instance[k] ? "instance" : "image", best[k]);
	return 0;
}

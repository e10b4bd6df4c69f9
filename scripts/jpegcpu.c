/*
 * jpegcpu: the host's time to load one COCO 2017 training image as
 * DeepLearningExamples' PyTorch Mask R-CNN hybrid loader does, in the
 * training process, before every step.
 *
 * PyTorch/Segmentation/MaskRCNN/pytorch/maskrcnn_benchmark/data/datasets/
 * coco.py (github.com/NVIDIA/DeepLearningExamples at 729963dd),
 * HybridDataLoader.__next__, reads each image of the batch with
 * torchvision.io.read_image(path, ImageReadMode.RGB) (the file read whole,
 * then decoded by libjpeg-turbo to 8-bit RGB), copies the decoded pixels
 * to pinned memory (.pin_memory()) and sends them to the device, where the
 * resize, flip and normalisation run. This program does the host's part
 * of that (its own code) on an image of the size COCO's are: 640x480 and
 * a file of 160 kB, the mean of train2017 (cocodataset.org/#download:
 * "2017 Train images [118K/18GB]"; 640 pixels is the longer side of most
 * COCO images, Lin et al. 2014, "Microsoft COCO", arXiv:1405.0312). The
 * image is made here: seeded noise over smooth gradients, encoded with
 * libjpeg at the quality whose file is closest to 160 kB (4:2:0). It
 * prints the file's size and quality and the least of ROUNDS timings of
 * the file read (from the page cache), the decode and the copy of the
 * decoded pixels, in milliseconds, one CSV row.
 *
 *   gcc -O2 -o /tmp/jpegcpu scripts/jpegcpu.c -ljpeg && /tmp/jpegcpu > table.csv
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jpeglib.h>

#define W 640
#define H 480
#define TARGET 160000L /* bytes: 18 GB / 118,287 images */
#define ROUNDS 15

static unsigned long long rng = 88172645463325252ULL;

static unsigned rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng >> 32);
}

/* image fills rgb with gradients and noise of amplitude amp. */
static void image(unsigned char *rgb, int amp)
{
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			for (int c = 0; c < 3; c++) {
				int v = (x * (c + 1) / 5 + y * (3 - c) / 4) % 256;
				v += (int)(rnd() % (2 * amp + 1)) - amp;
				rgb[(y * W + x) * 3 + c] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
			}
}

/* encode compresses rgb at quality q into *out, returning its size. */
static unsigned long encode(const unsigned char *rgb, int q, unsigned char **out)
{
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr e;
	unsigned long n = 0;
	c.err = jpeg_std_error(&e);
	jpeg_create_compress(&c);
	*out = NULL;
	jpeg_mem_dest(&c, out, &n);
	c.image_width = W, c.image_height = H, c.input_components = 3, c.in_color_space = JCS_RGB;
	jpeg_set_defaults(&c);
	jpeg_set_quality(&c, q, TRUE);
	jpeg_start_compress(&c, TRUE);
	while (c.next_scanline < H) {
		JSAMPROW row = (JSAMPROW)&rgb[c.next_scanline * W * 3];
		jpeg_write_scanlines(&c, &row, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	return n;
}

/* decode decompresses n bytes of src to RGB in dst. */
static void decode(const unsigned char *src, unsigned long n, unsigned char *dst)
{
	struct jpeg_decompress_struct d;
	struct jpeg_error_mgr e;
	d.err = jpeg_std_error(&e);
	jpeg_create_decompress(&d);
	jpeg_mem_src(&d, src, n);
	jpeg_read_header(&d, TRUE);
	d.out_color_space = JCS_RGB;
	jpeg_start_decompress(&d);
	while (d.output_scanline < d.output_height) {
		JSAMPROW row = &dst[d.output_scanline * d.output_width * 3];
		jpeg_read_scanlines(&d, &row, 1);
	}
	jpeg_finish_decompress(&d);
	jpeg_destroy_decompress(&d);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* closest encodes rgb at every quality and keeps the file nearest TARGET. */
static unsigned long closest(const unsigned char *rgb, unsigned char **jpg, int *quality)
{
	unsigned long best = 0;
	*jpg = NULL;
	for (int q = 50; q <= 98; q++) {
		unsigned char *o;
		unsigned long n = encode(rgb, q, &o);
		if (*jpg == NULL || labs((long)n - TARGET) < labs((long)best - TARGET)) {
			free(*jpg);
			*jpg = o, best = n, *quality = q;
		} else {
			free(o);
		}
	}
	return best;
}

int main(void)
{
	unsigned char *rgb = malloc(W * H * 3), *out = malloc(W * H * 3), *pinned = malloc(W * H * 3);
	unsigned char *jpg, *buf;
	int q = 0;
	image(rgb, 24);
	unsigned long n = closest(rgb, &jpg, &q);
	char path[] = "/tmp/jpegcpuXXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, jpg, n) != (ssize_t)n)
		return 1;
	close(fd);
	buf = malloc(n);
	double rd = 1e9, dec = 1e9, cp = 1e9;
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now();
		FILE *f = fopen(path, "rb");
		if (f == NULL || fread(buf, 1, n, f) != n)
			return 1;
		fclose(f);
		double t1 = now();
		decode(buf, n, out);
		double t2 = now();
		memcpy(pinned, out, W * H * 3);
		double t3 = now();
		rd = t1 - t0 < rd ? t1 - t0 : rd;
		dec = t2 - t1 < dec ? t2 - t1 : dec;
		cp = t3 - t2 < cp ? t3 - t2 : cp;
	}
	unlink(path);
	double load[3];
	getloadavg(load, 1);
	printf("# host time of loading one 640x480 COCO-sized JPEG to RGB (scripts/jpegcpu.c)\n");
	char cpu[128] = "unknown", line[256];
	FILE *ci = fopen("/proc/cpuinfo", "r");
	while (ci != NULL && fgets(line, sizeof line, ci) != NULL)
		if (strncmp(line, "model name", 10) == 0 && strchr(line, ':') != NULL) {
			snprintf(cpu, sizeof cpu, "%s", strchr(line, ':') + 2);
			cpu[strcspn(cpu, "\n")] = 0;
			break;
		}
	if (ci != NULL)
		fclose(ci);
	printf("# cpu %s\n", cpu);
	printf("# libjpeg %d (libjpeg-turbo), gcc -O2, %ld logical CPUs, load average %.2f, least of %d rounds\n",
	       JPEG_LIB_VERSION, sysconf(_SC_NPROCESSORS_ONLN), load[0], ROUNDS);
	printf("width,height,bytes,quality,read_ms,decode_ms,copy_ms\n");
	printf("%d,%d,%lu,%d,%.3f,%.3f,%.3f\n", W, H, n, q, rd * 1e3, dec * 1e3, cp * 1e3);
	return 0;
}

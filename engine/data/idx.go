package data

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// IDX magic numbers of the MNIST files: unsigned bytes (type 0x08) with
// three dimensions (images) or one (labels).
const (
	MagicImages = 0x00000803
	MagicLabels = 0x00000801
)

// MaxBytes is the largest payload Decode accepts, in bytes.
const MaxBytes = 1 << 31

// Sentinel errors wrapped by the IDX readers.
var (
	// ErrBadMagic reports a header that is not the expected IDX magic.
	ErrBadMagic = errors.New("bad magic")
	// ErrTruncated reports a file shorter than its header says.
	ErrTruncated = errors.New("truncated")
	// ErrTrailing reports bytes after the payload the header describes.
	ErrTrailing = errors.New("trailing data")
	// ErrTooLarge reports a header whose payload exceeds MaxBytes.
	ErrTooLarge = errors.New("too large")
)

// IDX is the content of an IDX file of unsigned bytes.
type IDX struct {
	// Dims holds the dimension sizes, outermost first.
	Dims []int
	// Data holds the Π Dims bytes, last dimension varying fastest.
	Data []byte
}

// Magic returns the file's magic number, 0x0800 + len(Dims).
func (x *IDX) Magic() uint32 { return 0x0800 | uint32(len(x.Dims)) }

func (x *IDX) shape() string {
	s := make([]string, len(x.Dims))
	for i, d := range x.Dims {
		s[i] = fmt.Sprint(d)
	}
	return strings.Join(s, "x")
}

// Decode reads one IDX file of unsigned bytes (magic 0x000008NN for N
// dimensions) from r, gunzipping it first if it starts with the gzip magic
// 0x1f 0x8b. It reads r to its end: bytes after the payload are an error.
func Decode(r io.Reader) (*IDX, error) { return decode(r, 0) }

// DecodeImages is Decode for an images file: magic 0x00000803, dimensions
// count × rows × cols.
func DecodeImages(r io.Reader) (*IDX, error) { return decode(r, MagicImages) }

// DecodeLabels is Decode for a labels file: magic 0x00000801, dimension
// count.
func DecodeLabels(r io.Reader) (*IDX, error) { return decode(r, MagicLabels) }

func describe(magic uint32) string {
	switch magic {
	case MagicImages:
		return "unsigned-byte images, 3 dims"
	case MagicLabels:
		return "unsigned-byte labels, 1 dim"
	}
	return fmt.Sprintf("unsigned bytes, %d dims", magic&0xff)
}

// decode reads an IDX stream; want is the required magic, or 0 for any
// unsigned-byte magic.
func decode(r io.Reader, want uint32) (*IDX, error) {
	br := bufio.NewReader(r)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		return decodeRaw(zr, want)
	}
	return decodeRaw(br, want)
}

func decodeRaw(r io.Reader, want uint32) (*IDX, error) {
	var hdr [4]byte
	if n, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, short(err, "%w: header has %d of 4 magic bytes", ErrTruncated, n)
	}
	magic := binary.BigEndian.Uint32(hdr[:])
	nd := int(hdr[3])
	switch {
	case want != 0 && magic != want:
		return nil, fmt.Errorf("%w 0x%08x, want 0x%08x (%s)", ErrBadMagic, magic, want, describe(want))
	case hdr[0] != 0 || hdr[1] != 0 || hdr[2] != 0x08 || nd == 0:
		return nil, fmt.Errorf("%w 0x%08x, want 0x000008NN (unsigned bytes, NN ≥ 1 dims)", ErrBadMagic, magic)
	}
	raw := make([]byte, 4*nd)
	if n, err := io.ReadFull(r, raw); err != nil {
		return nil, short(err, "%w: header has %d of %d dimension bytes", ErrTruncated, n, len(raw))
	}
	x := &IDX{Dims: make([]int, nd)}
	zero := false
	for i := range x.Dims {
		d := int(binary.BigEndian.Uint32(raw[4*i:]))
		if d > math.MaxInt32 {
			return nil, fmt.Errorf("%w: dimension %d is %d, above the format's 2^31-1", ErrTooLarge, i, d)
		}
		x.Dims[i] = d
		zero = zero || d == 0
	}
	size := 0
	if !zero {
		size = 1
		for _, d := range x.Dims {
			if size > MaxBytes/d {
				return nil, fmt.Errorf("%w: dims %s exceed %d bytes", ErrTooLarge, x.shape(), MaxBytes)
			}
			size *= d
		}
	}
	// Grow the buffer as data arrives, so that a header claiming much
	// more than the input holds cannot allocate it.
	data := make([]byte, 0, min(size, 1<<20))
	for len(data) < size {
		if len(data) == cap(data) {
			grown := make([]byte, len(data), min(2*cap(data), size))
			copy(grown, data)
			data = grown
		}
		n, err := io.ReadFull(r, data[len(data):cap(data)]) // cap(data) ≤ size
		data = data[:len(data)+n]
		if err != nil {
			return nil, short(err, "%w: dims %s need %d data bytes, found %d", ErrTruncated, x.shape(), size, len(data))
		}
	}
	x.Data = data
	var one [1]byte
	n, err := io.ReadFull(r, one[:])
	if n > 0 {
		return nil, fmt.Errorf("%w after the %d data bytes of dims %s", ErrTrailing, size, x.shape())
	}
	if err != io.EOF {
		return nil, fmt.Errorf("after data: %w", err)
	}
	return x, nil
}

// short turns the end-of-input errors of io.ReadFull into the formatted
// truncation error and passes other errors (a corrupt gzip stream) through.
func short(err error, format string, args ...any) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf(format, args...)
	}
	return err
}

// Encode writes x to w as an uncompressed IDX file. It returns an error if
// Dims is empty, has more than 255 entries, or does not match len(Data).
func Encode(w io.Writer, x *IDX) error {
	if len(x.Dims) == 0 || len(x.Dims) > 255 {
		return fmt.Errorf("encode idx: %d dims, want 1 to 255", len(x.Dims))
	}
	hdr := make([]byte, 4+4*len(x.Dims))
	hdr[2], hdr[3] = 0x08, byte(len(x.Dims))
	size := 1
	for i, d := range x.Dims {
		if d < 0 || d > math.MaxInt32 {
			return fmt.Errorf("encode idx: dimension %d is %d", i, d)
		}
		binary.BigEndian.PutUint32(hdr[4+4*i:], uint32(d))
		size *= d
	}
	if size != len(x.Data) {
		return fmt.Errorf("encode idx: dims %s need %d bytes, have %d", x.shape(), size, len(x.Data))
	}
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	_, err := w.Write(x.Data)
	return err
}

// ReadImages reads an images file (gzipped or not) with DecodeImages.
// Errors name the file.
func ReadImages(path string) (*IDX, error) { return readFile(path, MagicImages) }

// ReadLabels reads a labels file (gzipped or not) with DecodeLabels.
// Errors name the file.
func ReadLabels(path string) (*IDX, error) { return readFile(path, MagicLabels) }

func readFile(path string, want uint32) (*IDX, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	x, err := decode(f, want)
	if err != nil {
		return nil, fmt.Errorf("read idx %s: %w", path, err)
	}
	return x, nil
}

package logs

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits of the readers: no input, however long, makes them hold more
// than these.
const (
	// MaxLineBytes is the longest line a reader accepts: a longer one
	// (a file of NULs, a binary file) ends the reading with an error
	// naming its line.
	MaxLineBytes = 1 << 20
	// MaxBytes is the most a reader reads of one log: CSV and bench logs
	// are read line by line, and what they keep is bounded by
	// MaxRecords, not by their size.
	MaxBytes = 4 << 30
	// MaxWholeBytes is the most a reader keeps of a log of the other
	// formats, which are read whole before their lines are parsed.
	MaxWholeBytes = 256 << 20
	// MaxRecords is the most records (and runs and collective tests) one
	// log may give; CSV rows beyond AggregateRows count once per
	// configuration and batch.
	MaxRecords = 500_000
	// AggregateRows is the number of CSV measurement rows kept one by
	// one: past it, the rows of a file are merged into one measurement
	// per configuration and batch, their mean throughput (Log.Notes says
	// so), which the outlier and lack-of-fit tests then see.
	AggregateRows = 100_000
)

// ErrLimit is wrapped by the errors of an input over a limit of the
// readers (MaxLineBytes, MaxBytes, MaxWholeBytes, MaxRecords).
var ErrLimit = errors.New("over a reader's limit")

// sizeName prints a limit in bytes as people write it.
func sizeName(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// quoteMax is the most bytes of input an error quotes.
const quoteMax = 80

// quote returns s quoted for a message, cut to its first 80 bytes (on a
// character boundary) followed by "…(N bytes)" when it is longer: a
// malformed line may be megabytes long.
func quote(s string) string {
	if len(s) <= quoteMax {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:cutAt(s)]) + fmt.Sprintf("…(%d bytes)", len(s))
}

// clip returns s unquoted, cut as quote cuts it.
func clip(s string) string {
	if len(s) <= quoteMax {
		return s
	}
	return s[:cutAt(s)] + fmt.Sprintf("…(%d bytes)", len(s))
}

// cutAt returns where to cut s, longer than quoteMax: at most quoteMax
// bytes, on a character boundary.
func cutAt(s string) int {
	n := quoteMax
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// lineReader reads lines of at most MaxLineBytes, and at most max bytes
// in all, numbering them from 1; a line's ending ("\n" or "\r\n") is
// dropped.
type lineReader struct {
	s    *bufio.Scanner
	lim  *io.LimitedReader
	max  int64
	name string
	n    int // lines read
	err  error
}

func newLineReader(r io.Reader, name string, max int64) *lineReader {
	lim := &io.LimitedReader{R: r, N: max + 1}
	s := bufio.NewScanner(lim)
	s.Buffer(make([]byte, 0, 64<<10), MaxLineBytes+1)
	return &lineReader{s: s, lim: lim, max: max, name: name}
}

// next returns the next line, valid until the following call, or false
// at the end of the input or at an error (err says which).
func (lr *lineReader) next() ([]byte, bool) {
	if lr.err != nil {
		return nil, false
	}
	if !lr.s.Scan() {
		switch err := lr.s.Err(); {
		case errors.Is(err, bufio.ErrTooLong):
			lr.err = fmt.Errorf("%s:%d: line longer than %s: %w", lr.name, lr.n+1, sizeName(MaxLineBytes), ErrLimit)
		case err != nil:
			lr.err = fmt.Errorf("%s: %w", lr.name, err)
		case lr.lim.N <= 0:
			lr.err = lr.tooBig()
		}
		return nil, false
	}
	if lr.lim.N <= 0 {
		// The line may have been cut by the limit.
		lr.err = lr.tooBig()
		return nil, false
	}
	lr.n++
	l := lr.s.Bytes()
	if len(l) > MaxLineBytes {
		lr.err = fmt.Errorf("%s:%d: line longer than %s: %w", lr.name, lr.n, sizeName(MaxLineBytes), ErrLimit)
		return nil, false
	}
	return bytes.TrimSuffix(l, []byte("\r")), true
}

func (lr *lineReader) tooBig() error {
	return fmt.Errorf("%s: more than %s read (the limit of a log in this format): %w", lr.name, sizeName(lr.max), ErrLimit)
}

// ReadFile reads the log in the named file; see Read.
func ReadFile(name string) (*Log, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, name)
}

// Read reads a log, detecting its format with Detect. name is used in
// messages. Malformed lines are counted in Log.Malformed and the first
// MaxQuoted kept in Log.Errors; reading goes on after them. A log with no
// usable record is an error (ErrNoRecords) that says what was expected.
// A UTF-8 byte order mark, which spreadsheets write before a CSV, is
// dropped, and text in UTF-16 with a byte order mark, which Windows
// PowerShell's > writes, is converted.
//
// An io.ReadSeeker (a file) is read twice, to detect its format and to
// parse it; other readers are read whole first, up to MaxWholeBytes. The
// limits MaxLineBytes, MaxBytes, MaxWholeBytes and MaxRecords bound what
// any input makes Read hold; going over one is an error that wraps
// ErrLimit.
func Read(r io.Reader, name string) (*Log, error) {
	return read(r, name, "")
}

// ReadAs reads a log in format f; see Read.
func ReadAs(r io.Reader, name string, f Format) (*Log, error) {
	return read(r, name, f)
}

func read(r io.Reader, name string, f Format) (*Log, error) {
	rs, err := textSeeker(r, name)
	if err != nil {
		return nil, err
	}
	start, err := rs.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if f == "" {
		if f, err = detectFrom(rs, name); err != nil {
			return nil, err
		}
		if _, err := rs.Seek(start, io.SeekStart); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return parseFrom(rs, name, f)
}

// textSeeker returns r as an io.ReadSeeker positioned at the start of its
// UTF-8 text: past a UTF-8 byte order mark, or converted from UTF-16. A
// reader that cannot seek is read whole, up to MaxWholeBytes.
func textSeeker(r io.Reader, name string) (io.ReadSeeker, error) {
	rs, ok := r.(io.ReadSeeker)
	if ok {
		if _, err := rs.Seek(0, io.SeekCurrent); err != nil {
			ok = false
		}
	}
	if !ok {
		data, err := readCapped(r, name, MaxWholeBytes, MaxLineBytes)
		if err != nil {
			return nil, err
		}
		rs = bytes.NewReader(data)
	}
	start, err := rs.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var bom [3]byte
	n, err := io.ReadFull(rs, bom[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var order binary.ByteOrder
	switch {
	case n == 3 && bom == [3]byte{0xef, 0xbb, 0xbf}:
		return rs, nil
	case n >= 2 && bom[0] == 0xff && bom[1] == 0xfe:
		order = binary.LittleEndian
	case n >= 2 && bom[0] == 0xfe && bom[1] == 0xff:
		order = binary.BigEndian
	default:
		if _, err := rs.Seek(start, io.SeekStart); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return rs, nil
	}
	if _, err := rs.Seek(start+2, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// A line of UTF-16 text ends with a 0x0a byte too (and a byte of
	// another character may be one): readCapped bounds the lines by
	// twice MaxLineBytes.
	data, err := readCapped(rs, name, 2*MaxWholeBytes, 2*MaxLineBytes)
	switch {
	case err != nil:
		return nil, err
	case len(data)%2 != 0:
		return nil, fmt.Errorf("%s: UTF-16 text (byte order mark) of an odd number of bytes", name)
	}
	codes := make([]uint16, len(data)/2)
	for i := range codes {
		codes[i] = order.Uint16(data[2*i:])
	}
	return bytes.NewReader([]byte(string(utf16.Decode(codes)))), nil
}

// readCapped reads r whole, refusing more than max bytes in all or a line
// (bytes up to a 0x0a) over maxLine, with the errors of lineReader.
func readCapped(r io.Reader, name string, max int64, maxLine int) ([]byte, error) {
	var b bytes.Buffer
	buf := make([]byte, 64<<10)
	line, run := 1, 0 // the line being read, and its bytes so far
	for {
		n, err := r.Read(buf)
		for _, c := range buf[:n] {
			if c == '\n' {
				line, run = line+1, 0
				continue
			}
			if run++; run > maxLine {
				return nil, fmt.Errorf("%s:%d: line longer than %s: %w", name, line, sizeName(int64(maxLine)), ErrLimit)
			}
		}
		if int64(b.Len()+n) > max {
			return nil, fmt.Errorf("%s: more than %s read (the limit of a log read whole): %w", name, sizeName(max), ErrLimit)
		}
		b.Write(buf[:n])
		if err == io.EOF {
			return b.Bytes(), nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
}

// detectFrom reads r line by line, as Detect reads data.
func detectFrom(r io.Reader, name string) (Format, error) {
	var d detector
	lr := newLineReader(r, name, MaxBytes)
	for {
		l, ok := lr.next()
		if !ok {
			break
		}
		if d.line(l) {
			return d.result()
		}
	}
	if lr.err != nil {
		return "", lr.err
	}
	f, err := d.result()
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

// parseFrom reads a log in format f from r: CSV and bench logs line by
// line, the others whole.
func parseFrom(r io.Reader, name string, f Format) (*Log, error) {
	lg := &Log{Name: name, Format: f}
	switch f {
	case CSV:
		if err := readCSV(newLineReader(r, name, MaxBytes), lg); err != nil {
			return nil, err
		}
		return lg.finish()
	case Benchlog:
		if err := readBenchlog(newLineReader(r, name, MaxBytes), lg); err != nil {
			return nil, err
		}
		return lg.finish()
	case Placements:
		if err := readPlacements(newLineReader(r, name, MaxBytes), lg); err != nil {
			return nil, err
		}
		return lg.finish()
	}
	if !slices.Contains(Formats, f) {
		return nil, fmt.Errorf("%s: unknown format %s (valid: %s)", name, quote(string(f)), formatNames())
	}
	data, err := readWhole(r, name)
	if err != nil {
		return nil, err
	}
	return parse(data, name, f)
}

// readWhole reads r's lines into one slice, each ended by "\n", within
// MaxLineBytes and MaxWholeBytes.
func readWhole(r io.Reader, name string) ([]byte, error) {
	lr := newLineReader(r, name, MaxWholeBytes)
	var b bytes.Buffer
	for {
		l, ok := lr.next()
		if !ok {
			break
		}
		b.Write(l)
		b.WriteByte('\n')
	}
	if lr.err != nil {
		return nil, lr.err
	}
	return b.Bytes(), nil
}

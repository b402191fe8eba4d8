// Package regfile opens the files a user names as models, vectors and
// pipelines, and refuses any that is not a regular file. A path naming a
// device, a FIFO or a directory is a mistake, and reading it costs what
// the device gives: /dev/zero as a model was read for 47 s (9.8 GB)
// before it was refused, and a FIFO nobody writes to blocked the open
// forever, in a server reload while it held the pipeline's write lock.
package regfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped by the errors for a path that is not a regular
// file.
var ErrNotRegular = errors.New("not a regular file")

// Open opens the file at path for reading when it is a regular file (or a
// link to one) and returns it with its size. It opens without blocking,
// so that a FIFO cannot hold it up, and checks the type of what it
// opened, not of what the path named a moment before. Errors name path.
func Open(path string) (*os.File, int64, error) {
	// O_NONBLOCK makes opening a FIFO return at once; on a regular file,
	// which is all that is kept, reads ignore it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(st.Mode()))}
	}
	return f, st.Size(), nil
}

// kind names the type of a file that is not regular.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}

// ReadFile reads the regular file at path whole, as os.ReadFile does,
// refusing one larger than max bytes before reading it (max < 0: no
// bound). A file that grows while it is read is read up to max.
func ReadFile(path string, max int64) ([]byte, error) {
	f, size, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if max >= 0 && size > max {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d it may hold", path, size, max)
	}
	limit := int64(math.MaxInt64)
	if max >= 0 {
		limit = max + 1
	}
	var buf bytes.Buffer
	buf.Grow(int(size) + 1)
	if _, err := buf.ReadFrom(io.LimitReader(f, limit)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if max >= 0 && int64(buf.Len()) > max {
		return nil, fmt.Errorf("%s: grew past %d bytes while it was read", path, max)
	}
	return buf.Bytes(), nil
}

package dirlock

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestAcquire takes a second lock on a directory while the first is held
// in this process, and again after its release.
func TestAcquire(t *testing.T) {
	for _, tc := range []struct {
		name     string
		release  bool // release the first lock before the second Acquire
		wantHeld bool
	}{
		{name: "held", wantHeld: true},
		{name: "released", release: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out") // created by Acquire
			first, err := Acquire(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tc.release {
				if err := first.Release(); err != nil {
					t.Fatal(err)
				}
			} else {
				defer first.Release()
			}
			second, err := Acquire(dir)
			if !tc.wantHeld {
				if err != nil {
					t.Fatalf("Acquire after Release: %v", err)
				}
				second.Release()
				return
			}
			var held *HeldError
			if !errors.As(err, &held) {
				if second != nil {
					second.Release()
				}
				t.Fatalf("second Acquire: err = %v, want a *HeldError", err)
			}
			if held.Dir != dir || held.PID != os.Getpid() {
				t.Errorf("HeldError %+v, want dir %s, pid %d", held, dir, os.Getpid())
			}
		})
	}
}

// TestLockedByAnotherProcess holds the lock in a child process: Acquire
// fails at once naming the child's pid, and succeeds once the child is
// killed, which leaves the lock file in place.
func TestLockedByAnotherProcess(t *testing.T) {
	if dir := os.Getenv("DIRLOCK_TEST_HOLD"); dir != "" {
		holdChild(dir)
		return
	}
	dir := t.TempDir()
	c := exec.Command(os.Args[0], "-test.run=^TestLockedByAnotherProcess$")
	c.Env = append(os.Environ(), "DIRLOCK_TEST_HOLD="+dir)
	c.Stderr = os.Stderr
	stdin, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("child: %q, %v", line, err)
	}

	l, err := Acquire(dir)
	var held *HeldError
	if !errors.As(err, &held) {
		if l != nil {
			l.Release()
		}
		t.Fatalf("Acquire while a child holds the lock: err = %v, want a *HeldError", err)
	}
	if want := fmt.Sprintf("%s is locked by process %d", dir, c.Process.Pid); err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}

	// Killed, the child cannot release the lock: the kernel does.
	if err := c.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait()
	l, err = Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, Name)); err != nil {
		t.Errorf("lock file gone after Release: %v", err)
	}
}

// holdChild is TestLockedByAnotherProcess's child: it locks dir, says so,
// and waits to be killed (or for its stdin to close).
func holdChild(dir string) {
	l, err := Acquire(dir)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	// Unreachable, the lock's file could be finalized and closed, which
	// drops the lock.
	runtime.KeepAlive(l)
	os.Exit(0)
}

// TestRefusesSymlink plants a symbolic link at the lock file's name:
// Acquire refuses it rather than empty the file it points to.
func TestRefusesSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no O_NOFOLLOW")
	}
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(target, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, Name)); err != nil {
		t.Skipf("cannot make symbolic links here: %v", err)
	}
	if l, err := Acquire(dir); err == nil {
		l.Release()
		t.Fatal("locked through a symbolic link")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me\n" {
		t.Errorf("the link's target now holds %q", b)
	}
}

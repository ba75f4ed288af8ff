package sandbox

import (
	"errors"
	"os/exec"
)

func newRunsc(cfg Config) (backend, error) {
	if _, err := exec.LookPath("runsc"); err != nil {
		return nil, errors.New("gVisor (runsc) is not installed or not on PATH; install it (https://gvisor.dev/docs/user_guide/install/), or choose the bwrap backend")
	}
	return nil, errors.New("the runsc backend is not available in this version; use the bwrap backend")
}

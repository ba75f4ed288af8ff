//go:build !linux

package sandbox

import "errors"

func newBwrap(Config) (backend, error) {
	return nil, errors.New("the bwrap backend needs Linux (bubblewrap uses Linux namespaces); use the docker backend")
}

func newRunsc(Config) (backend, error) {
	return nil, errors.New("the runsc backend needs Linux (gVisor runs on Linux); use the docker backend")
}

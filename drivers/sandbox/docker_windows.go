package sandbox

import "errors"

func newDocker(Config) (backend, error) {
	return nil, errors.New("the docker backend is not available on Windows in this version")
}

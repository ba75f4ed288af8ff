module github.com/mcs-go/mcs

go 1.26.0

require (
	github.com/getkin/kin-openapi v0.153.0 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
	golang.org/x/oauth2 v0.38.0 // indirect
)

module github.com/mcs-go/mcs

go 1.26

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
)

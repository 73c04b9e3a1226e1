module github.com/fingraph/fingraph

go 1.26

require (
	github.com/go-chi/chi/v5 v5.2.3
	github.com/sony/gobreaker/v2 v2.3.0
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/stretchr/testify v1.11.1
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

module github.com/fingraph/fingraph

go 1.26

require (
	github.com/go-chi/chi/v5 v5.2.3
	github.com/sony/gobreaker/v2 v2.3.0
)

require github.com/stretchr/testify v1.11.1 // indirect

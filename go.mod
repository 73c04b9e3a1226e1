module github.com/fingraph/fingraph

go 1.26

require (
	github.com/go-chi/chi/v5 v5.2.3 // indirect
	github.com/stretchr/testify v1.11.1 // indirect
)

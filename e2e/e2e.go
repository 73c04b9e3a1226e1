// Package e2e holds fingraph's end-to-end tests: a real gateway (app.Start)
// in front of the real sandbox, both on loopback, driven over HTTP and
// websockets as frontends drive it. harness_test.go is the one harness every
// test uses. Unit tests live beside the code they test.
package e2e

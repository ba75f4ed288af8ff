package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
)

// Example_ui starts the web console on the demo, visits the printed URL as a
// browser does (the token is traded for a cookie and dropped from the URL)
// and stops the console.
func Example_ui() {
	ctx, cancel := context.WithCancel(context.Background())
	w := &urlWriter{url: make(chan string, 1)}
	done := make(chan int)
	go func() { done <- run(ctx, []string{"ui", "--no-open"}, strings.NewReader(""), w, io.Discard) }()
	url := <-w.url

	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(url)
	if err == nil {
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println("landed on", resp.Request.URL.Path, "without the token:", resp.Request.URL.RawQuery == "")
		fmt.Println("tools:", len(regexp.MustCompile(`<details class="tool"`).FindAll(page, -1)))
	} else {
		fmt.Println(err)
	}
	cancel()
	fmt.Println("exit code", <-done)
	// Output:
	// landed on /tools without the token: true
	// tools: 10
	// exit code 0
}

package auth

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestVerify(t *testing.T) {
	a, err := New([]byte("secret"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := New([]byte("other"), time.Minute)
	good := a.Issue("client-1")
	if len(good) != TokenLen {
		t.Fatalf("len(token) = %d; want %d", len(good), TokenLen)
	}
	flipped := []byte(good)
	if flipped[15] == 'A' {
		flipped[15] = 'B'
	} else {
		flipped[15] = 'A'
	}
	tests := []struct {
		name     string
		clientID string
		token    string
		want     error
	}{
		{"valid", "client-1", good, nil},
		{"other client", "client-2", good, ErrForged},
		{"other secret", "client-1", other.Issue("client-1"), ErrForged},
		{"tampered", "client-1", string(flipped), ErrForged},
		{"empty", "client-1", "", ErrMalformed},
		{"too short", "client-1", good[:10], ErrMalformed},
		{"bad alphabet", "client-1", strings.Repeat("*", TokenLen), ErrMalformed},
		{"non-canonical tail", "client-1", good[:TokenLen-1] + "_", ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := a.Verify(tc.clientID, tc.token); !errors.Is(got, tc.want) {
				t.Errorf("Verify = %v; want %v", got, tc.want)
			}
		})
	}
}

func TestExpired(t *testing.T) {
	a, _ := New([]byte("s"), time.Minute)
	tok := a.Issue("c")
	a.SetClock(func() time.Time { return time.Now().Add(2 * time.Minute) })
	if err := a.Verify("c", tok); !errors.Is(err, ErrExpired) {
		t.Errorf("Verify after TTL = %v; want %v", err, ErrExpired)
	}
}

func TestRandomSecret(t *testing.T) {
	a, _ := New(nil, 0)
	b, _ := New(nil, 0)
	if err := b.Verify("c", a.Issue("c")); !errors.Is(err, ErrForged) {
		t.Errorf("two random secrets agree: Verify = %v", err)
	}
}

func FuzzVerify(f *testing.F) {
	a, _ := New([]byte("secret"), time.Minute)
	f.Add("c", a.Issue("c"))
	f.Add("", "")
	f.Add("c", strings.Repeat("A", TokenLen))
	f.Fuzz(func(t *testing.T, clientID, token string) {
		err := a.Verify(clientID, token)
		if err == nil && token != a.Issue(clientID) && len(token) != TokenLen {
			t.Fatalf("accepted a token of length %d", len(token))
		}
	})
}

func BenchmarkIssueVerify(b *testing.B) {
	a, _ := New([]byte("secret"), time.Minute)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := a.Verify("c", a.Issue("c")); err != nil {
			b.Fatal(err)
		}
	}
}

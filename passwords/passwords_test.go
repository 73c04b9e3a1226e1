package passwords

import "testing"

func TestCheck(t *testing.T) {
	acct := Account{Email: "annabella@example.com", Current: "Old-horse-battery-1"}
	for _, tc := range []struct {
		pw   string
		fail bool
	}{
		{"12345678", true},
		{"Password1", true},
		{"annabella@example.com", true},
		{"ANNABELLA@EXAMPLE.COM", true},
		{"AnnaBella", true},
		{"        ", true},
		{"\t\t\t\t\t\t\t\t", true},
		{"zzzzzzzzzzzz", true},
		{"Old-horse-battery-1", true},
		{"short", true},
		{string(make([]rune, 0)) + "ééééééééééééééééééééééééééééééééééééé", true}, // 37 characters, 74 bytes
		{"correct horse battery staple", false},
		{"ééééééééééé1", false},
		{"Anna's 2nd garden gate", false},
	} {
		if got := Check(tc.pw, acct); (got != "") != tc.fail {
			t.Errorf("Check(%q) = %q, want failure %v", tc.pw, got, tc.fail)
		}
	}
}

func TestTheListHasNoShortEntries(t *testing.T) {
	for pw := range common {
		if len([]rune(pw)) < MinChars {
			t.Errorf("%q is shorter than the length rule already refuses", pw)
		}
	}
	if len(common) < 200 {
		t.Fatalf("the list has %d entries", len(common))
	}
}

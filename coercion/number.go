package coercion

import (
	"math"
	"strconv"
	"strings"
)

// decimal is a number as digits: (-1)^neg × mant × 10^exp, with mant free of
// leading and trailing zeros ("" for zero). Working on digits rather than
// float64 is what keeps 9007199254740993 exact.
type decimal struct {
	neg  bool
	mant string
	exp  int
}

// maxExpDigits bounds the exponent we read; anything longer is far outside
// float64's range, and reading it whole could be a denial of service.
const maxExpDigits = 6

// parseDecimal reads a number in any common spelling: optional sign, digits
// with an optional fraction, optional exponent, surrounding spaces allowed
// ("42", " +42 ", "3.0", ".5", "1e3"). Words such as "inf" or "nan", hex and
// digit separators are not numbers here.
func parseDecimal(s string) (decimal, bool) {
	s = strings.TrimSpace(s)
	var d decimal
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		d.neg = s[i] == '-'
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intPart := s[intStart:i]
	fracPart := ""
	if i < len(s) && s[i] == '.' {
		i++
		fracStart := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		fracPart = s[fracStart:i]
	}
	if intPart == "" && fracPart == "" {
		return d, false
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			expNeg = s[i] == '-'
			i++
		}
		expStart := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		digits := strings.TrimLeft(s[expStart:i], "0")
		if i == expStart {
			return d, false
		}
		if len(digits) > maxExpDigits {
			digits = "9999999" // saturate: out of range either way
		}
		exp, _ = strconv.Atoi("0" + digits)
		if expNeg {
			exp = -exp
		}
	}
	if i != len(s) {
		return d, false
	}
	mant := strings.TrimLeft(intPart+fracPart, "0")
	exp -= len(fracPart)
	for len(mant) > 0 && mant[len(mant)-1] == '0' {
		mant = mant[:len(mant)-1]
		exp++
	}
	if mant == "" {
		return decimal{}, true // zero, and -0 is just 0
	}
	d.mant, d.exp = mant, exp
	return d, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// finite reports whether d is within float64's range: neither overflowing
// to infinity nor underflowing to zero. Consumers that decode to float64
// would otherwise get a different number than the text said.
func (d decimal) finite() bool {
	if d.mant == "" {
		return true
	}
	lead := len(d.mant) + d.exp - 1 // power of ten of the leading digit
	switch {
	case lead > 309 || lead < -325:
		return false
	case lead < 308 && lead > -307:
		return true
	}
	f, err := strconv.ParseFloat(d.mant+"e"+strconv.Itoa(d.exp), 64)
	return err == nil && f != 0 && !math.IsInf(f, 0)
}

func (d decimal) whole() bool { return d.exp >= 0 }

// String writes d as a JSON number: whole values as integers, others in
// plain decimal notation unless that would need many zeros.
func (d decimal) String() string {
	if d.mant == "" {
		return "0"
	}
	var b strings.Builder
	if d.neg {
		b.WriteByte('-')
	}
	point := len(d.mant) + d.exp // digits before the decimal point
	switch {
	case d.exp >= 0:
		b.WriteString(d.mant)
		b.WriteString(strings.Repeat("0", d.exp))
	case point > 0:
		b.WriteString(d.mant[:point])
		b.WriteByte('.')
		b.WriteString(d.mant[point:])
	case point > -6:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -point))
		b.WriteString(d.mant)
	default:
		b.WriteString(d.mant[:1])
		if len(d.mant) > 1 {
			b.WriteByte('.')
			b.WriteString(d.mant[1:])
		}
		b.WriteByte('e')
		b.WriteString(strconv.Itoa(point - 1))
	}
	return b.String()
}

// integerText converts text to the exact JSON integer it spells, if it spells
// a whole number within float64's range.
func integerText(s string) (string, bool) {
	d, ok := parseDecimal(s)
	if !ok || !d.whole() || !d.finite() {
		return "", false
	}
	return d.String(), true
}

// numberText converts text to a JSON number, if it spells a finite one.
func numberText(s string) (string, bool) {
	d, ok := parseDecimal(s)
	if !ok || !d.finite() {
		return "", false
	}
	return d.String(), true
}

// isIntegerLiteral reports whether a JSON number literal has a whole value
// (3, 3.0 and 3e2 do; 3.5 does not), as JSON Schema's integer type means.
func isIntegerLiteral(lit string) bool {
	d, ok := parseDecimal(lit)
	return ok && d.whole()
}

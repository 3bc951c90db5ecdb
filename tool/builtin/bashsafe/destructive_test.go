package bashsafe

import "testing"

func TestIsDestructive(t *testing.T) {
	cases := []struct {
		cmd  string
		want bool
	}{
		{"ls -la", false},
		{"echo rm", false},
		{"git status", false},
		{"git clean -n", false},
		{"git push origin main", false},
		{"git reset --soft HEAD~1", false},
		{"rm -rf build", true},
		{"/bin/rm x", true},
		{"rmdir d", true},
		{"unlink f", true},
		{"dd if=/dev/zero of=/dev/sda", true},
		{"mkfs.ext4 /dev/sdb1", true},
		{"shred -u secret", true},
		{"truncate -s 0 log", true},
		{"ls && rm x", true},
		{"echo $(rm x)", true},
		{"sudo rm -rf /", true},
		{"ls | xargs rm", true},
		{"find . -delete", true},
		{"find . -name '*.o' -exec rm {} +", true},
		{"git reset --hard", true},
		{"git -C repo reset --hard origin/main", true},
		{"git clean -fdx", true},
		{"git push --force", true},
		{"git push -f origin main", true},
		{"git push origin +main", true},
		{"git branch -D feature", true},
		{"git stash drop", true},
		{"rm 'unterminated", true},
	}
	for _, tc := range cases {
		if got := IsDestructive(tc.cmd); got != tc.want {
			t.Errorf("IsDestructive(%q) = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

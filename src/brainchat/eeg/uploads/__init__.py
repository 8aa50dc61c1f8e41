"""Accepting uploaded recordings: checked, safely named, unpacked, grouped, within the user's
quota."""

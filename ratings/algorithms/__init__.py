"""Pure rating functions over plain data: no Django import, so they replay fast and test easily."""

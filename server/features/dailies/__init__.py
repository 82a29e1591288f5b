"""Daily challenges: one code per UTC day and variant family, and how games on codes start."""

/** One line of `seam selftest`: a guarantee (`case`), the arm that shows it (GREEN, or RED on a defect), and what was seen. */
export interface Arm {
  case: string;
  arm: string;
  pass: boolean;
  detail: string;
}

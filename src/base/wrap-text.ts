/**
 * Text laid out for a terminal of a given width: --help, and the sentences
 * (verdicts, captions, break markers) of the reading commands.
 */

/**
 * `text` in lines of at most `width` characters, the first starting with `first`, the others with `rest`,
 * broken at spaces (a word longer than a line is cut); no line ends in a space.
 */
export function wrapText(text: string, width: number, first = "", rest = first): string[] {
  const words = text.split(/\s+/).filter((w) => w !== "");
  const lines: string[] = [];
  let line = first;
  let empty = true;
  const room = () => width - line.length;
  for (let w of words) {
    if (!empty && w.length + 1 > room()) {
      lines.push(line);
      line = rest;
      empty = true;
    }
    while (w.length > room() + (empty ? 0 : -1) && w.length > 0) {
      const take = Math.max(1, room() - (empty ? 0 : 1));
      line += `${empty ? "" : " "}${w.slice(0, take)}`;
      lines.push(line);
      w = w.slice(take);
      line = rest;
      empty = true;
    }
    if (w.length === 0) continue;
    line += `${empty ? "" : " "}${w}`;
    empty = false;
  }
  if (!empty) lines.push(line);
  return lines;
}

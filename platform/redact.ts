/** Replaces tokens and URL credentials that slip into free text (driver error messages, for example). */
export function scrubText(text: string): string {
  return text
    .replace(/svcpat_[0-9A-Za-z]+/g, 'svcpat_[redacted]')
    .replace(/(\w+:\/\/[^:/\s]+:)[^@\s]+@/g, '$1[redacted]@')
    .replace(/(password\s*[=:]\s*)('[^']*'|"[^"]*"|\S+)/gi, '$1[redacted]');
}

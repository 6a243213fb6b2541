/** Where each schema file lives under the schemas directory (also what document schemas reference). */

export function memberFile(family: string, $type: string): string {
  return `${family}/${$type}.schema.json`;
}

export function familyFile(family: string): string {
  return `${family}.family.schema.json`;
}

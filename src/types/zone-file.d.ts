// zone-file ships no type declarations: the part of its API the BNS attachment parser uses.
declare module 'zone-file' {
  export interface ZoneFileUri {
    name?: string;
    target: string;
    priority?: number;
    weight?: number;
  }
  export interface ZoneFileTxt {
    name: string;
    txt: string | string[];
  }
  export interface ZoneFileObject {
    $origin?: string;
    $ttl?: number;
    uri?: ZoneFileUri[];
    txt?: ZoneFileTxt[];
  }
  export function parseZoneFile(text: string): ZoneFileObject;
}

import pkg from "../../package.json" with { type: "json" };

/** The version stamped into every row as `seam_impl: "seam/<version>"`. */
export const VERSION: string = pkg.version;

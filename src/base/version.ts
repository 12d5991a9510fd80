import pkg from "../../package.json" with { type: "json" };

/** The version stamped into every row as `seam_impl: "seam/<version>"`. */
export const VERSION: string = pkg.version;

/** The npm name seam ships under: the unscoped `seam` there is another project's. */
export const PACKAGE_NAME: string = pkg.name;

import { describe, expect, it } from 'vitest';
import { companionsOf, isVectorFile } from './project-files.js';

describe('project files', () => {
  it('knows which project files hold vector layers', () => {
    expect(['survey.gpkg', 'roads.GeoJSON', 'a/b/trees.shp', 'x.fgb', 'tracks.gpx'].every(isVectorFile)).toBe(true);
    expect(['project.qgs', 'project.qgz', 'DCIM/1.jpg', 'styles.qml', 'survey.gpkg-wal', 'notes'].some(isVectorFile)).toBe(false);
  });

  it("finds a shapefile's companions beside it, in any case, and nothing for other files", () => {
    const files = ['data/Trees.shp', 'data/Trees.SHX', 'data/trees.dbf', 'data/Trees.prj', 'data/Trees.qix', 'other/Trees.dbf', 'data/Trees2.dbf'];
    expect(companionsOf('data/Trees.shp', files)).toEqual(['data/Trees.SHX', 'data/trees.dbf', 'data/Trees.prj']);
    expect(companionsOf('survey.gpkg', ['survey.gpkg-shm'])).toEqual([]);
  });
});
